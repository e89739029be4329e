import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createAdmission } from '../admission/admission.js';
import { Deadline } from '../deadline/deadline.js';
import { InvalidOptionError } from '../errors.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { SERVER_METRICS } from '../wire/metric-names.js';
import { instrumentAdmission } from './admission-prometheus.js';

const T0 = 1_700_000_000_000;

function scenario() {
  const clock = createFakeClock(T0);
  const admission = createAdmission({ clock, maxInFlight: 1, maxQueue: 1 });
  const tickets: Array<{ release(finished: boolean): void }> = [];
  const offer = (criticality: 'critical' | 'default' | 'sheddable' = 'default') =>
    admission.offer(
      'GET /orders/:id',
      Deadline.after(1000, clock),
      criticality,
      (t) => tickets.push(t),
      () => {},
    );
  return { clock, admission, offer, tickets };
}

describe('instrumentAdmission', () => {
  it('publishes admissions, refusals by reason, queue figures and sojourn times', async () => {
    const { clock, admission, offer, tickets } = scenario();
    const registry = new Registry();
    instrumentAdmission(admission, { registry });
    offer('critical');
    offer();
    offer(); // queue full
    clock.advance(4);
    tickets[0]!.release(true);
    const text = await registry.metrics();
    expect(text).toContain('prazo_server_admitted_total{route="GET /orders/:id",criticality="critical"} 1');
    expect(text).toContain('prazo_server_admitted_total{route="GET /orders/:id",criticality="default"} 1');
    expect(text).toContain(
      'prazo_server_refused_total{route="GET /orders/:id",reason="queue-full",criticality="default"} 1',
    );
    expect(text).not.toContain('reason="shed"');
    expect(text).toContain('prazo_server_in_flight 1');
    expect(text).toContain('prazo_server_queue_length 0');
    expect(text).toContain('prazo_server_queue_overloaded 0');
    expect(text).toContain('prazo_server_queue_sojourn_seconds_bucket{le="0.005"} 1');
    expect(text).toContain('prazo_server_queue_sojourn_seconds_count 1');
  });

  it('counts only what happened since the last scrape into the counters, never going back', async () => {
    const { admission, offer, tickets } = scenario();
    const registry = new Registry();
    instrumentAdmission(admission, { registry });
    offer();
    await registry.metrics();
    tickets[0]!.release(true);
    offer();
    const text = await registry.metrics();
    expect(text).toContain('prazo_server_admitted_total{route="GET /orders/:id",criticality="default"} 2');
  });

  it('exposes every catalogued series, and detaches cleanly', async () => {
    const { admission } = scenario();
    const registry = new Registry();
    const handle = instrumentAdmission(admission, { registry });
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name).sort();
    expect(names).toEqual(
      Object.values(SERVER_METRICS)
        .map((m) => m.prometheus)
        .sort(),
    );
    expect(() => instrumentAdmission(admission, { registry })).toThrow(InvalidOptionError);
    handle.detach();
    handle.detach();
    expect(await registry.getMetricsAsJSON()).toEqual([]);
    expect(() => instrumentAdmission(admission, { registry, prefix: 'shop_' })).not.toThrow();
    expect(() => instrumentAdmission(admission, { registry, prefix: '9' })).toThrow(/prefix/);
  });
});
