import { type DataPoint, MeterProvider } from '@opentelemetry/sdk-metrics';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CollectingReader } from '../../test/support/collecting-reader.js';
import { createEventSourceDouble } from '../../test/support/event-source-double.js';
import { instrument as instrumentOtel } from './otel.js';
import { instrument as instrumentPrometheus } from './prometheus.js';
import type { InstanceView } from './source.js';

const fleet: InstanceView[] = Array.from({ length: 12 }, (_, i) => ({
  origin: `http://10.0.0.${i + 1}:8080`,
  state: i === 0 ? 'ejected' : 'up',
  ewmaMs: 10 + i,
  inFlight: 2,
  share: 1 / 12,
}));

function fleetDouble() {
  const dep = createEventSourceDouble('payments');
  return Object.assign(dep, { instances: () => fleet });
}

const transition = {
  instance: fleet[0]!.origin,
  from: 'up',
  to: 'ejected',
  reason: 'consecutive-failures',
  atMs: 0,
  timesEjected: 1,
  untilMs: 10_000,
};

describe('per-instance metrics', () => {
  it('Prometheus: instances by state, ten instance labels and "other", ejections and requeues', async () => {
    const registry = new Registry();
    const dep = fleetDouble();
    instrumentPrometheus(dep, { registry });
    dep.emit('instance-ejected', transition as never);
    dep.emit('requeue', {
      requestId: 1,
      attempt: 1,
      instance: fleet[1]!.origin,
      reason: 'connect-refused',
      requeues: 1,
    } as never);
    const text = await registry.metrics();
    expect(text).toContain('prazo_instances{dependency="payments",state="ejected"} 1');
    expect(text).toContain('prazo_instances{dependency="payments",state="up"} 11');
    expect(text).toContain('prazo_instance_ejections_total{dependency="payments"} 1');
    expect(text).toContain('prazo_requeues_total{dependency="payments"} 1');
    const shares = [...text.matchAll(/^prazo_instance_share\{[^}]*instance="([^"]+)"/gm)].map((m) => m[1]);
    expect(shares).toHaveLength(11);
    expect(shares).toContain('other');
    expect(text).toContain('prazo_instance_in_flight{dependency="payments",instance="other"} 4');
    expect(text).toContain('prazo_instance_latency_seconds{dependency="payments",instance="other"} 0.021');
  });

  it('OpenTelemetry: the same figures under prazo.instance and prazo.instance.state', async () => {
    const reader = new CollectingReader();
    const provider = new MeterProvider({ readers: [reader] });
    const dep = fleetDouble();
    instrumentOtel(dep, { meterProvider: provider });
    dep.emit('instance-ejected', transition as never);
    const data = await reader.metrics();
    const points = (name: string) =>
      (data.find((m) => m.descriptor.name === name)?.dataPoints ?? []) as DataPoint<number>[];
    expect(
      points('prazo.client.instances').find((p) => p.attributes['prazo.instance.state'] === 'ejected')?.value,
    ).toBe(1);
    expect(points('prazo.client.instance.share')).toHaveLength(11);
    expect(points('prazo.client.instance.ejections')[0]?.value).toBe(1);
  });
});
