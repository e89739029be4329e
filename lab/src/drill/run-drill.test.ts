import { describe, expect, it } from 'vitest';
import { type ConfigReading, instanceRequests } from './report/recorder.js';
import { columnTurns, drillConfigs, stillQueues, throughProxy } from './run-drill.js';
import type { TierStats } from './services/spec.js';
import { type SupplierCounts, ZERO_SUPPLIER_COUNTS } from './services/supplier.js';

const supplier = (counts: Partial<SupplierCounts>): SupplierCounts => ({
  ...ZERO_SUPPLIER_COUNTS,
  ...counts,
});

describe('drillConfigs', () => {
  it('runs naive and prazo alone without --peers', () => {
    expect(drillConfigs({ peers: false }, '/usr/sbin/haproxy')).toEqual({
      configs: ['naive', 'prazo'],
      skipped: [],
      haproxy: null,
    });
  });

  it('adds every peer with --peers', () => {
    expect(drillConfigs({ peers: true }, '/usr/sbin/haproxy').configs).toEqual([
      'naive',
      'prazo',
      'cockatiel',
      'opossum',
      'undici-retry',
      'haproxy',
    ]);
  });

  it('runs the columns of --peers two at a time, naive and prazo first', () => {
    expect(columnTurns(['naive', 'prazo', 'cockatiel', 'opossum', 'undici-retry', 'haproxy'])).toEqual([
      ['naive', 'prazo'],
      ['cockatiel', 'opossum'],
      ['undici-retry', 'haproxy'],
    ]);
    expect(columnTurns(['naive', 'prazo', 'cockatiel', 'opossum', 'undici-retry'])).toEqual([
      ['naive', 'prazo'],
      ['cockatiel', 'opossum'],
      ['undici-retry'],
    ]);
    expect(columnTurns(['naive', 'prazo'])).toEqual([['naive', 'prazo']]);
  });

  it('skips only the HAProxy column when haproxy is missing, and says how to install it', () => {
    const { configs, skipped } = drillConfigs({ peers: true }, null);
    expect(configs).not.toContain('haproxy');
    expect(configs).toContain('cockatiel');
    expect(skipped).toHaveLength(1);
    expect(skipped[0]!.config).toBe('haproxy');
    expect(skipped[0]!.reason).toContain('apt-get install haproxy');
  });
});

describe('throughProxy', () => {
  it('counts what the edge sent as originals, the rest as retries, and leaves the health checks out', () => {
    const reading = {
      gateway: {} as TierStats,
      inventory: { attempts: { original: 100, retry: 0, hedge: 0 } } as TierStats,
      suppliers: [
        supplier({ received: 80, originals: 80, unknownKind: 5, afterDeadline: 2 }),
        supplier({ received: 60, originals: 60, unknownKind: 5 }),
      ],
      instanceRequests: [75, 55],
    } satisfies ConfigReading;
    const proxied = throughProxy(reading);
    expect(proxied.suppliers[0]).toMatchObject({
      received: 130,
      originals: 100,
      retries: 30,
      hedges: 0,
      afterDeadline: 2,
    });
    // Each instance's own count, health checks left out, stays per instance.
    expect(proxied.instanceRequests).toEqual([75, 55]);
  });

  it('counts on each instance what the client sent it, without the health checks', () => {
    expect(
      instanceRequests([
        supplier({ received: 80, unknownKind: 5 }),
        supplier({ received: 3 }),
        supplier({ received: 0 }),
      ]),
    ).toEqual([75, 3, 0]);
  });
});

describe('stillQueues (the restart after the trigger)', () => {
  it('restarts only a supplier with more waiting than five rounds of its workers serve', () => {
    expect(stillQueues([supplier({ queued: 0 }), supplier({ queued: 10 })], 2)).toBe(false);
    expect(stillQueues([supplier({ queued: 0 }), supplier({ queued: 11 })], 2)).toBe(true);
    expect(stillQueues([], 2)).toBe(false);
  });
});
