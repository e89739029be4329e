import { type DataPoint, MeterProvider } from '@opentelemetry/sdk-metrics';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CollectingReader } from '../../test/support/collecting-reader.js';
import { createEventSourceDouble } from '../../test/support/event-source-double.js';
import { instrument as instrumentOtel } from './otel.js';
import { instrument as instrumentPrometheus } from './prometheus.js';
import type { OverloadView } from './source.js';

function overloadDouble(view: OverloadView) {
  const dep = createEventSourceDouble('payments');
  return Object.assign(dep, { overload: () => view });
}

const both: OverloadView = {
  concurrency: { limit: 17, inFlight: 15, queued: 4 },
  throttle: { probability: 0.25 },
};

const limited = (reason: 'concurrency' | 'throttle') =>
  ({ requestId: 1, reason, remainingMs: 900, limit: 17, queued: 4, probability: 0.25 }) as never;

describe('overload metrics', () => {
  it('Prometheus: calls refused locally by reason, the limit, calls in flight and waiting, the throttle probability', async () => {
    const registry = new Registry();
    const dep = overloadDouble(both);
    instrumentPrometheus(dep, { registry });
    dep.emit('limited', limited('throttle'));
    dep.emit('limited', limited('throttle'));
    dep.emit('limited', limited('concurrency'));
    const text = await registry.metrics();
    expect(text).toContain('prazo_requests_limited_total{dependency="payments",reason="throttle"} 2');
    expect(text).toContain('prazo_requests_limited_total{dependency="payments",reason="concurrency"} 1');
    expect(text).toContain('prazo_concurrency_limit{dependency="payments"} 17');
    expect(text).toContain('prazo_concurrency_in_flight{dependency="payments"} 15');
    expect(text).toContain('prazo_concurrency_queued{dependency="payments"} 4');
    expect(text).toContain('prazo_throttle_probability{dependency="payments"} 0.25');
  });

  it('Prometheus: no overload gauge for a dependency whose protections are off, the counters at 0', async () => {
    const registry = new Registry();
    instrumentPrometheus(overloadDouble({ concurrency: null, throttle: null }), { registry });
    const text = await registry.metrics();
    expect(text).not.toMatch(/^prazo_(concurrency_limit|concurrency_queued|throttle_probability)\{/m);
    expect(text).toContain('prazo_requests_limited_total{dependency="payments",reason="concurrency"} 0');
  });

  it('OpenTelemetry: the same figures under prazo.reason', async () => {
    const reader = new CollectingReader();
    const provider = new MeterProvider({ readers: [reader] });
    const dep = overloadDouble(both);
    instrumentOtel(dep, { meterProvider: provider });
    dep.emit('limited', limited('concurrency'));
    const data = await reader.metrics();
    const points = (name: string) =>
      (data.find((m) => m.descriptor.name === name)?.dataPoints ?? []) as DataPoint<number>[];
    expect(
      points('prazo.client.requests.limited').find((p) => p.attributes['prazo.reason'] === 'concurrency')
        ?.value,
    ).toBe(1);
    expect(points('prazo.client.concurrency.limit')[0]?.value).toBe(17);
    expect(points('prazo.client.concurrency.queued')[0]?.value).toBe(4);
    expect(points('prazo.client.throttle.probability')[0]?.value).toBe(0.25);
  });
});
