import { afterEach, describe, expect, it } from 'vitest';
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
  for (const id of ['title', 'status', 'summary', 'charts']) body.appendChild(new FakeNode('div')).id = id;
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

function draw() {
  const document = fakeDocument();
  global.document = document;
  dashboardClient(data(), false);
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

  it('explains each summary row on the page, escaped', () => {
    const { document } = draw();
    const summary = document.getElementById('summary')!.innerHTML;
    expect(summary).toContain('<div class="why">Checkouts that reached the user &lt;in time&gt;.</div>');
  });
});
