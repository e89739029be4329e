import { afterEach, describe, expect, it } from 'vitest';
import { reply, startServer, type TestServer } from '../../test/support/servers.js';
import { startTier, type TierService } from '../src/drill/services/tier.js';

let supplier: TestServer | undefined;
let tier: TierService | undefined;
afterEach(async () => {
  await tier?.close();
  await supplier?.close();
  tier = undefined;
  supplier = undefined;
});

describe('the drill’s edge service', () => {
  it('publishes its prazo clients’ own metrics (prazo/prometheus), which the drill’s /metrics serves', async () => {
    supplier = await startServer((_req, res) => reply(res, 200, {}, '{"stock":1}'));
    tier = await startTier({
      role: 'tier',
      name: 'inventory',
      config: 'prazo',
      path: '/reserve',
      downstreamName: 'supplier',
      downstream: [supplier.origin],
      downstreamPath: '/stock',
      edge: true,
      naive: { timeoutMs: 1_000, attempts: 3 },
      startP99Ms: 50,
      deadline: { defaultMs: 1_900, maxMs: 1_900 },
    });
    // Before calibration the edge is a plain deadline-bounded hop: no client, no metrics.
    expect(await tier.metrics()).toBe('');
    await tier.configure({
      p99Ms: 50,
      p95Ms: 30,
      connectMs: 70,
      readMs: 70,
      attempts: 2,
      userDeadlineMs: 1_900,
      budgetWindowMs: 10_000,
      warning: null,
    });
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`http://127.0.0.1:${tier.port}/reserve`);
      expect(res.status).toBe(200);
      await res.text();
    }
    const text = await tier.metrics();
    expect(text).toMatch(/^prazo_requests_total\{dependency="supplier",outcome="success"\} 3$/m);
    expect(text).toMatch(/^prazo_attempts_total\{dependency="supplier",kind="original"\} 3$/m);
    expect(text).toMatch(/^prazo_timeout_seconds\{dependency="supplier",phase="read"\} 0\.07$/m);
    // One client for both variants of the checkout, as a service has one per dependency.
    expect(text).not.toContain('dependency="supplier-unhedged"');
  });
});
