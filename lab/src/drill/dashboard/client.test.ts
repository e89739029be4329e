import { afterEach, describe, expect, it } from 'vitest';
import { CHART_SCALE } from './chart-scale.js';
import { type DashboardData, dashboardClient } from './client.js';

/** Just enough of a DOM for the dashboard's code: elements, attributes, ids. */
class FakeNode {
  id = '';
  className = '';
  innerHTML = '';
  textContent: string | null = null;
  readonly attributes = new Map<string, string>();
  readonly children: FakeNode[] = [];
  readonly tag: string;
  constructor(tag: string) {
    this.tag = tag;
  }
  get firstChild(): FakeNode | null {
    return this.children[0] ?? null;
  }
  appendChild<T extends FakeNode>(child: T): T {
    this.children.push(child);
    return child;
  }
  removeChild(child: FakeNode): void {
    this.children.splice(this.children.indexOf(child), 1);
  }
  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value);
    if (name === 'id') this.id = value;
  }
  find(test: (node: FakeNode) => boolean): FakeNode | null {
    if (test(this)) return this;
    for (const child of this.children) {
      const found = child.find(test);
      if (found) return found;
    }
    return null;
  }
}

function fakeDocument() {
  const body = new FakeNode('body');
  for (const id of ['title', 'status', 'phases', 'summary', 'charts'])
    body.appendChild(new FakeNode('div')).id = id;
  return {
    body,
    getElementById: (id: string) => body.find((n) => n.id === id),
    createElement: (tag: string) => new FakeNode(tag),
    createElementNS: (_ns: string, tag: string) => new FakeNode(tag),
  };
}

const global = globalThis as unknown as { document?: unknown };
afterEach(() => {
  delete global.document;
});

/** Ten 1 s samples; checkouts end in none of the middle four (everything in flight, nothing answered). */
function data(): DashboardData {
  const samples = Array.from({ length: 10 }, (_, i) => {
    const stuck = i >= 3 && i < 7;
    return {
      tMs: (i + 1) * 1000,
      phase: 'warmup',
      checkoutOk: stuck ? 0 : 40,
      checkoutFailed: stuck ? 0 : 10,
      catalogOk: 50,
      catalogFailed: 0,
      poolInUse: 10 + i,
      poolPeak: 12 + i,
      poolWaiting: 0,
      originals: 55,
      retries: i,
      hedges: 0,
      afterDeadline: 0,
      retryRatio: i / 100,
      liveP99Ms: 180,
      timeoutMs: i < 5 ? 30_000 : 252,
      // Requests each supplier instance received: even in the warm-up, the sick one starved after.
      instanceRequests: i < 5 ? [20, 20, 20] : [i === 5 ? 6 : 1, 9, 40],
    };
  });
  return {
    title: 'drill',
    done: true,
    elapsedMs: 10_000,
    totalMs: 10_000,
    sampleMs: 1000,
    poolSize: 50,
    retryRatioAlert: 0.05,
    phases: [
      { name: 'warmup', label: 'healthy warm-up', startMs: 0, endMs: 5_000 },
      { name: 'fleet', label: 'one instance sick, one slow', startMs: 5_000, endMs: 10_000 },
    ],
    samples: { naive: samples, prazo: samples },
    instanceLabels: ['#0 sick (503)', '#1 slow (+150 ms)', '#2 healthy'],
    summary: [
      ['/checkout goodput, degradation', '4.80 %', '0.30 %', 'Checkouts that reached the user <in time>.'],
    ],
    checks: [],
  };
}

function draw(input: DashboardData = data()) {
  const document = fakeDocument();
  global.document = document;
  dashboardClient(input, false, CHART_SCALE);
  const chart = (id: string) => document.body.find((n) => n.attributes.get('data-chart') === id)!;
  return { document, chart };
}

describe('the dashboard page', () => {
  it('draws a success line at 0 where no request ended, instead of leaving a gap', () => {
    const { chart } = draw();
    // 10 samples × 2 routes: every interval is a point.
    expect(chart('success-naive').attributes.get('data-points')).toBe('20');
    const path = chart('success-naive').find((n) => n.tag === 'path')!;
    expect(path.attributes.get('d')!.match(/M/g)).toHaveLength(1); // one unbroken line
  });

  it('puts round ticks on the axes', () => {
    const { chart } = draw();
    expect(chart('pool-naive').attributes.get('data-ticks')).toBe('0 25 50'); // the pool size, 50
    expect(chart('success-naive').attributes.get('data-ticks')).toBe('0 50 100');
    expect(chart('supplier-naive').attributes.get('data-ticks')).toBe('0 20 40 60'); // 55 originals/s
    expect(chart('ratio-naive').attributes.get('data-ticks')).toBe('0 0.05 0.1'); // ratio up to 0.09
    expect(chart('timeout-naive').attributes.get('data-ticks')).toBe('100 1000 10000 100000');
  });

  it('draws each instance’s share of the supplier requests over the fleet phase alone', () => {
    const { chart } = draw();
    const shares = chart('instances-prazo');
    // The five samples that end within the phase (6 s … 10 s), one line per instance.
    expect(shares.attributes.get('data-points')).toBe('15');
    expect(shares.attributes.get('data-ticks')).toBe('0 50 100');
    const legends = [] as string[];
    shares.find((n) => {
      if (n.tag === 'text' && n.textContent?.startsWith('■')) legends.push(n.textContent);
      return false;
    });
    expect(legends).toEqual(['■ #0 sick (503)', '■ #1 slow (+150 ms)', '■ #2 healthy']);
    // The sick instance's line: 6 of 55 (10.9 %), then 1 of 50 (2 %), starting at the phase's left edge.
    const sick = shares.find((n) => n.tag === 'path' && n.attributes.get('stroke') === '#e03131')!;
    const d = sick.attributes.get('d')!;
    expect(d.match(/[ML]/g)).toHaveLength(5);
    const [first, second] = [...d.matchAll(/[ML]([\d.]+),([\d.]+)/g)].map((m): [number, number] => [
      Number(m[1]),
      Number(m[2]),
    ]);
    // 6 s is 1 s into the 5 s phase (a fifth of the plot's 406 px after its 46 px margin), not 6 s
    // into the run.
    expect(first![0]).toBeCloseTo(46 + 406 / 5, 0);
    expect(first![1]).toBeLessThan(second![1]); // 10.9 % is higher on the chart than 2 %
    // Outside the phase nothing is drawn, whatever the samples say.
    expect(chart('instances-naive').attributes.get('data-points')).toBe('15');
  });

  it('draws the panels of one metric on one y axis, fitted to the highest of them', () => {
    const input = data();
    // prazo's supplier sees 20 originals/s and a retry ratio of at most 0.009; naive's 55 and 0.09.
    input.samples['prazo'] = input.samples['naive']!.map((s) => ({
      ...s,
      originals: 20,
      retryRatio: (s['retryRatio'] as number) / 10,
    }));
    const { chart } = draw(input);
    for (const metric of ['supplier', 'ratio', 'pool', 'success', 'instances', 'timeout']) {
      const naive = chart(`${metric}-naive`).attributes;
      const prazo = chart(`${metric}-prazo`).attributes;
      expect(prazo.get('data-ticks'), metric).toBe(naive.get('data-ticks'));
      expect(prazo.get('data-y-max'), metric).toBe(naive.get('data-y-max'));
    }
    expect(chart('supplier-prazo').attributes.get('data-ticks')).toBe('0 20 40 60');
    expect(chart('ratio-prazo').attributes.get('data-ticks')).toBe('0 0.05 0.1');
    // The tick labels drawn say the same.
    const drawn = (id: string) => {
      const labels: string[] = [];
      chart(id).find((n) => {
        if (n.attributes.get('class') === 'y-tick') labels.push(n.textContent ?? '');
        return false;
      });
      return labels;
    };
    expect(drawn('supplier-prazo')).toEqual(['0', '20', '40', '60']);
    // The same values are drawn at the same heights in both panels: the retries, 0–9 per second in each.
    const line = (id: string, color: string) =>
      chart(id)
        .find((n) => n.tag === 'path' && n.attributes.get('stroke') === color)!
        .attributes.get('d');
    expect(line('supplier-prazo', '#e03131')).toBe(line('supplier-naive', '#e03131'));
    expect(line('supplier-prazo', '#1971c2')).not.toBe(line('supplier-naive', '#1971c2'));
  });

  it('names the phases on the axis as the page does, with a key to the short names', () => {
    const input = data();
    input.done = false;
    input.elapsedMs = 6_000;
    const { document, chart } = draw(input);
    expect(document.getElementById('status')!.textContent).toBe(
      'fleet (one instance sick, one slow) — 6 s of 10 s',
    );
    const key = document.getElementById('phases')!.innerHTML;
    expect(key).toContain('<b>fleet</b> one instance sick, one slow (5–10 s)');
    const labels = (id: string) => {
      const found: string[] = [];
      chart(id).find((n) => {
        if (n.attributes.get('class') === 'phase-label') found.push(n.textContent ?? '');
        return false;
      });
      return found;
    };
    // The fleet phase alone spans the whole chart: its full label fits.
    expect(labels('instances-prazo')).toEqual(['one instance sick, one slow']);
    expect(labels('pool-prazo')).toEqual(['healthy warm-up', 'one instance sick, one slow']);
  });

  it('wraps legend entries that do not fit on one row', () => {
    const input = data();
    input.instanceLabels = [
      '#0 sick (503) with a long note',
      '#1 slow (+150 ms) with a long note',
      '#2 healthy, also long',
    ];
    const { chart } = draw(input);
    const entries: Array<{ x: number; y: number }> = [];
    chart('instances-prazo').find((n) => {
      if (n.attributes.get('class') === 'legend')
        entries.push({ x: Number(n.attributes.get('x')), y: Number(n.attributes.get('y')) });
      return false;
    });
    expect(new Set(entries.map((e) => e.y)).size).toBe(2);
    expect(chart('instances-prazo').attributes.get('viewBox')).toBe('0 0 460 202');
  });

  it('explains each summary row on the page, escaped', () => {
    const { document } = draw();
    const summary = document.getElementById('summary')!.innerHTML;
    expect(summary).toContain('<div class="why">Checkouts that reached the user &lt;in time&gt;.</div>');
  });
});
