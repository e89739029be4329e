import { isPrazoError } from 'prazo';
import { describe, expect, it } from 'vitest';
import {
  advance,
  createTestDependency,
  flush,
  settle,
  TEST_START_MS as T0,
} from '../../../../src/testing/test-dependency.js';
import { createRandom } from '../../random.js';
import { ledgerSpans } from './ledger-spans.js';
import { formatWaterfallText, renderWaterfallSvg, renderWaterfallsHtml, waterfallAxis } from './render.js';
import { joinTrail, parseTrail, type TrailSpan } from './trail.js';
import { buildWaterfall, type DeadlineWaterfall, runWaterfalls, withTransit } from './waterfall.js';

/** A real ledger: inventory's call to the supplier answered 503, backed off, then answered 200. */
async function retriedLedger() {
  const { dep, clock, transport } = createTestDependency({ name: 'supplier' });
  const pending = settle(dep.request({ path: '/stock', deadline: 900 }));
  clock.advance(2);
  transport.exchanges[0]!.written();
  clock.advance(8);
  transport.exchanges[0]!.respond(503);
  await flush();
  for (let i = 0; i < 100 && transport.exchanges.length < 2; i++) await advance(clock, 5, 5);
  clock.advance(30);
  transport.exchanges[1]!.respond(200);
  const res = (await pending).value!;
  await res.body.dump();
  await dep.close();
  return res.ledger;
}

/** The chain's spans for one /checkout received by the gateway at T0 - 20 (gateway → orders → inventory). */
function chainSpans(edge: TrailSpan[], endMs: number): TrailSpan[] {
  const inventory = joinTrail(
    [
      {
        hop: 'inventory',
        kind: 'hop',
        startMs: T0 - 2,
        durationMs: endMs - T0 + 3,
        note: '878 ms left on arrival',
      },
      ...edge,
    ],
    undefined,
  );
  const orders = joinTrail(
    [
      { hop: 'orders', kind: 'hop', startMs: T0 - 10, durationMs: endMs - T0 + 12, note: '' },
      { hop: 'orders', kind: 'call', startMs: T0 - 8, durationMs: endMs - T0 + 9, note: '200' },
    ],
    inventory,
  );
  return [
    {
      hop: 'gateway',
      kind: 'hop',
      startMs: T0 - 20,
      durationMs: endMs - T0 + 22,
      note: '1 900 ms left on arrival',
    },
    { hop: 'gateway', kind: 'call', startMs: T0 - 18, durationMs: endMs - T0 + 19, note: '200' },
    ...parseTrail(orders),
  ];
}

describe('the deadline waterfall of a /checkout', () => {
  it("lays prazo's ledger out under the hops above it, on one axis from the gateway's arrival", async () => {
    const ledger = await retriedLedger();
    const edge = ledgerSpans('inventory', ledger, T0);
    expect(edge.map((s) => s.kind)).toEqual(['attempt', 'backoff', 'attempt']);
    expect(edge[0]!.note).toMatch(/^#1 original 503 \(connect 2 ms, first byte 8 ms\); 900 ms left$/);
    const endMs = T0 + ledger.elapsedMs;
    const w = buildWaterfall({
      config: 'prazo',
      pick: 'slow',
      variant: 'hedged',
      status: 200,
      receivedAtMs: T0 - 20,
      answeredAtMs: endMs + 2,
      userDeadlineEpochMs: T0 - 20 + 2_000,
      limitEpochMs: T0 - 20 + 1_900,
      spans: chainSpans(edge, endMs),
      candidates: 0,
    });
    expect(w.source).toBe('ledger');
    expect(w.elapsedMs).toBe(ledger.elapsedMs + 22);
    expect(w.limitMs).toBe(1_900);
    expect(w.rows.map((r) => `${r.hop} ${r.kind}`)).toEqual([
      'gateway hop',
      'gateway call',
      'orders hop',
      'orders call',
      'inventory hop',
      'inventory attempt',
      'inventory backoff',
      'inventory attempt',
    ]);
    const [first, wait, second] = w.rows.slice(5);
    expect(first!.startMs).toBe(20);
    expect(wait!.startMs).toBe(30);
    expect(second!.startMs).toBe(wait!.startMs + wait!.durationMs);
    expect(second!.startMs + second!.durationMs).toBe(20 + ledger.elapsedMs);
  });

  it("shows where a failing call's deadline ran out, from the error's ledger", async () => {
    const { dep, clock, transport } = createTestDependency({ name: 'supplier' });
    const pending = settle(dep.request({ path: '/stock', deadline: 300 }));
    await advance(clock, 310);
    const { error } = await pending;
    expect(isPrazoError(error, 'DEADLINE_EXCEEDED')).toBe(true);
    const ledger = (error as { ledger: Parameters<typeof ledgerSpans>[1] }).ledger;
    const edge = ledgerSpans('inventory', ledger, T0, 'DEADLINE_EXCEEDED');
    expect(edge[0]!.note).toMatch(/^#1 original (aborted|failure)/);
    expect(edge.at(-1)).toEqual({
      hop: 'inventory',
      kind: 'error',
      startMs: T0 + ledger.elapsedMs,
      durationMs: 0,
      note: 'DEADLINE_EXCEEDED',
    });
    expect(transport.exchanges.length).toBeGreaterThan(0);
    await dep.close();
  });

  it('shows a call prazo refused before sending anything as its error alone, where it started', async () => {
    const { dep } = createTestDependency({ name: 'supplier' });
    const { error } = await settle(dep.request({ path: '/stock', deadline: 50 }));
    expect(isPrazoError(error, 'DEADLINE_INSUFFICIENT')).toBe(true);
    const ledger = (error as { ledger: Parameters<typeof ledgerSpans>[1] }).ledger;
    const spans = ledgerSpans('inventory', ledger, T0, 'DEADLINE_INSUFFICIENT');
    expect(spans).toEqual([
      { hop: 'inventory', kind: 'error', startMs: T0, durationMs: 0, note: 'DEADLINE_INSUFFICIENT' },
    ]);
    const w = buildWaterfall({
      config: 'prazo',
      pick: 'failing',
      variant: 'hedged',
      status: 504,
      receivedAtMs: T0 - 2,
      answeredAtMs: T0 + 1,
      userDeadlineEpochMs: null,
      limitEpochMs: T0 + 48,
      spans,
      candidates: 0,
    });
    expect(w.source).toBe('ledger');
    expect(w.rows).toEqual([
      { hop: 'inventory', kind: 'error', startMs: 2, durationMs: 0, note: 'DEADLINE_INSUFFICIENT' },
    ]);
    await dep.close();
  });

  it('draws the bars in a terminal on the shared axis, with the deadlines marked', async () => {
    const ledger = await retriedLedger();
    const endMs = T0 + ledger.elapsedMs;
    const w: DeadlineWaterfall = {
      ...buildWaterfall({
        config: 'prazo',
        pick: 'failing',
        variant: 'unhedged',
        status: 504,
        receivedAtMs: T0 - 20,
        answeredAtMs: endMs + 2,
        userDeadlineEpochMs: T0 - 20 + 2_000,
        limitEpochMs: T0 - 20 + 1_900,
        spans: chainSpans(ledgerSpans('inventory', ledger, T0), endMs),
        candidates: 0,
      }),
      candidates: 42,
      phase: 'burst',
      tMs: 12_300,
    };
    expect(waterfallAxis(w)).toEqual({ fromMs: 0, toMs: 2_000 });
    const lines = formatWaterfallText(w, 40);
    expect(lines[0]).toBe(
      `prazo · failing /checkout: 504 after ${Math.round(w.elapsedMs)} ms (unhedged) · burst, +12.3 s · 1 of 42 failing · edge from prazo's ledger`,
    );
    expect(lines).toHaveLength(w.rows.length + 2);
    // Each cell is 50 ms: the limit (1 900 ms) is cell 38, the user's deadline (2 000 ms) the last.
    const gatewayHop = lines[1]!;
    expect(gatewayHop).toMatch(/^ {2}gateway +hop +▒{2,}/);
    const axisStart = gatewayHop.indexOf('▒');
    expect(gatewayHop[axisStart + 38]).toBe('|');
    expect(gatewayHop[axisStart + 39]).toBe(':');
    const attempt = lines.find((l) => l.includes('attempt'))!;
    expect(attempt.slice(axisStart, axisStart + 1)).toBe('▏');
    if (process.env['SHOW_WATERFALL']) console.log(lines.join('\n'));
    expect(lines.at(-1)).toContain(
      '| deadline the gateway honoured, 1 900 ms · : the user gives up, 2 000 ms',
    );
  });

  it('draws it as SVG: one bar per span, the deadlines as lines, notes escaped', () => {
    const w: DeadlineWaterfall = {
      config: 'naive',
      pick: 'failing',
      variant: 'hedged',
      status: 502,
      receivedAtMs: T0,
      elapsedMs: 9_000,
      userDeadlineMs: 2_000,
      limitMs: null,
      source: 'attempts',
      candidates: 3,
      rows: [
        { hop: 'gateway', kind: 'hop', startMs: 0, durationMs: 9_000, note: '' },
        { hop: 'inventory', kind: 'attempt', startMs: 5, durationMs: 3_000, note: '#1 original failed <x>' },
        { hop: 'inventory', kind: 'gap', startMs: 3_005, durationMs: 10, note: '' },
      ],
    };
    const svg = renderWaterfallSvg(w);
    expect(svg).toContain('data-rows="3"');
    expect(svg.match(/<rect /g)).toHaveLength(3);
    expect(svg).toContain('fill="#e03131" data-kind="attempt"');
    expect(svg).toContain('&lt;x&gt;');
    expect(svg).not.toContain('<x>');
    // The axis runs to 9 000 ms over 420 px from x = 150: the user's 2 000 ms is at x ≈ 243.3.
    expect(svg).toContain('x1="243.3"');
    expect(svg).not.toContain('deadline ');
    const html = renderWaterfallsHtml([w], ['naive', 'prazo']);
    expect(html.match(/<figure class="waterfall">/g)).toHaveLength(1);
    expect(renderWaterfallsHtml([], ['naive'])).toBe('');
  });
});

describe('the time before the gateway received a /checkout', () => {
  // A real shape: prazo's gateway received the /checkout with 133 ms of the user's 2 s left, and
  // its pre-call check refused the call to orders at once.
  const late: DeadlineWaterfall = {
    config: 'prazo',
    pick: 'failing',
    variant: 'unhedged',
    status: 504,
    receivedAtMs: T0,
    elapsedMs: 0.4,
    userDeadlineMs: 133,
    limitMs: 133,
    source: 'attempts',
    candidates: 589,
    rows: [
      { hop: 'gateway', kind: 'hop', startMs: 0, durationMs: 0.4, note: '133 ms left on arrival' },
      { hop: 'gateway', kind: 'call', startMs: 0.1, durationMs: 0.2, note: '504 DEADLINE_INSUFFICIENT' },
    ],
  };

  it('is a first row from the user’s send, when the deadline shows there was any', () => {
    const w = withTransit(late, 2_000);
    expect(w.rows[0]).toEqual({
      hop: 'user',
      kind: 'transit',
      startMs: -1_867,
      durationMs: 1_867,
      note: 'sent, not yet received by the gateway',
    });
    expect(withTransit(w, 2_000)).toBe(w);
    expect(withTransit({ ...late, userDeadlineMs: 1_999.5 }, 2_000)).toEqual({
      ...late,
      userDeadlineMs: 1_999.5,
    });
    expect(withTransit({ ...late, userDeadlineMs: null }, 2_000).rows).toHaveLength(2);
  });

  it('is drawn on the axis before the arrival, in a terminal and as SVG', () => {
    const w = withTransit(late, 2_000);
    expect(waterfallAxis(w)).toEqual({ fromMs: -1_867, toMs: 133 });
    const lines = formatWaterfallText(w, 40);
    expect(lines[1]).toMatch(/^ {2}user +transit +─{37}/);
    expect(lines.at(-1)).toContain("axis -1 867 ms (the user's send) – 133 ms");
    // 0 ms is at 150 + 1 867 / 2 000 × 420 px.
    const svg = renderWaterfallSvg(w);
    expect(svg).toContain('<line x1="542.1"');
    // The axis is labelled at both ends; 0, 28 px from its end, would crowd the end's label.
    expect(svg).toContain('fill="#495057">-1 867 ms</text>');
    expect(svg).toContain('fill="#495057">133 ms</text>');
    expect(svg).not.toContain('fill="#495057">0</text>');
  });
});

describe("the run's waterfalls from the phases' samples", () => {
  const sample = (
    config: string,
    pick: 'failing' | 'slow',
    phase: string,
    candidates: number,
    elapsedMs: number,
  ) => ({ config, pick, phase, candidates, elapsedMs }) as DeadlineWaterfall;

  it('keeps the slowest of the slow ones and draws a failing one weighted by the failures behind it', () => {
    const phases = [
      sample('prazo', 'failing', 'warmup', 1, 100),
      sample('prazo', 'failing', 'burst', 99, 900),
      sample('prazo', 'slow', 'warmup', 500, 300),
      sample('prazo', 'slow', 'burst', 200, 1_200),
    ];
    const random = createRandom(5);
    let burst = 0;
    for (let i = 0; i < 1_000; i++) {
      const run = runWaterfalls(phases, ['naive', 'prazo'], random);
      expect(run).toHaveLength(2);
      expect(run[1]).toMatchObject({ pick: 'slow', phase: 'burst', candidates: 700 });
      expect(run[0]).toMatchObject({ pick: 'failing', candidates: 100 });
      if (run[0]!.phase === 'burst') burst++;
    }
    expect(burst).toBeGreaterThan(960);
    expect(burst).toBeLessThan(1_000);
  });
});
