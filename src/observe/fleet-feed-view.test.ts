import { MeterProvider, type MetricData } from '@opentelemetry/sdk-metrics';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CollectingReader } from '../../test/support/collecting-reader.js';
import { createEventSourceDouble } from '../../test/support/event-source-double.js';
import type { FleetFeedView } from './fleet-feed-view.js';
import { instrument as instrumentOtel } from './otel.js';
import { instrument as instrumentPrometheus } from './prometheus.js';

/** A feed whose state the test sets. */
function feed(target: string) {
  let state: { ageMs: number | null; stale: boolean } = { ageMs: null, stale: false };
  const view: FleetFeedView & { set(s: typeof state): void } = {
    target,
    state: () => state,
    set(s) {
      state = s;
    },
  };
  return view;
}

describe('fleet feed staleness in the metrics', () => {
  it('publishes the age and the stale flag through prazo/prometheus', async () => {
    const registry = new Registry();
    const payments = feed('payments');
    const handle = instrumentPrometheus(createEventSourceDouble('payments'), {
      registry,
      fleetLatency: payments,
    });
    let text = await registry.metrics();
    expect(text).not.toMatch(/prazo_fleet_latency_age_seconds\{/);
    expect(text).toMatch(/prazo_fleet_latency_stale\{dependency="payments"\} 0/);
    payments.set({ ageMs: 95_000, stale: true });
    text = await registry.metrics();
    expect(text).toMatch(/prazo_fleet_latency_age_seconds\{dependency="payments"\} 95/);
    expect(text).toMatch(/prazo_fleet_latency_stale\{dependency="payments"\} 1/);
    handle.detach();
    expect(await registry.metrics()).not.toMatch(/prazo_fleet_latency_stale\{/);
  });

  it('publishes the age and the stale flag through prazo/otel', async () => {
    const reader = new CollectingReader();
    const provider = new MeterProvider({ readers: [reader] });
    const payments = feed('payments');
    payments.set({ ageMs: 4_000, stale: false });
    const handle = instrumentOtel(createEventSourceDouble('payments'), {
      meterProvider: provider,
      fleetLatency: [payments],
    });
    const value = (data: MetricData[], name: string) =>
      data
        .find((m) => m.descriptor.name === name)
        ?.dataPoints.find((p) => p.attributes['prazo.dependency'] === 'payments')?.value;
    let data = await reader.metrics();
    expect(value(data, 'prazo.client.fleet_latency.age')).toBe(4);
    expect(value(data, 'prazo.client.fleet_latency.stale')).toBe(0);
    payments.set({ ageMs: 60_000, stale: true });
    data = await reader.metrics();
    expect(value(data, 'prazo.client.fleet_latency.stale')).toBe(1);
    handle.detach();
  });

  it('refuses something that is not a feed', () => {
    expect(() =>
      instrumentPrometheus(createEventSourceDouble('x'), {
        registry: new Registry(),
        fleetLatency: [{}] as never,
      }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', option: 'fleetLatency[0]' }));
  });
});
