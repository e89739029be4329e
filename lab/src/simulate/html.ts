import { sharedYAxis } from '../drill/dashboard/chart-scale.js';
import { formatSimulationTable, type SimulationResult } from './report.js';
import type { AmplificationResult } from './scenarios/amplification.js';
import type { InstancesResult } from './scenarios/instances.js';
import type { OverloadResult } from './scenarios/overload.js';
import type { TailResult } from './scenarios/tail.js';

const COLORS = ['#d62728', '#ff7f0e', '#1f77b4', '#2ca02c', '#9467bd', '#8c564b'];

const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

interface Line {
  name: string;
  values: readonly number[];
}

interface ChartOptions {
  title: string;
  yLabel: string;
  lines: Line[];
  /** Seconds to shade (the trigger). */
  shade?: [number, number];
  /** Logarithmic y axis (latencies). */
  log?: boolean;
}

const niceTicks = (max: number): number[] => {
  if (!(max > 0)) return [0, 1];
  const step0 = max / 5;
  const mag = 10 ** Math.floor(Math.log10(step0));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((v) => v >= step0) ?? step0;
  const ticks: number[] = [];
  for (let v = 0; ticks.length === 0 || ticks[ticks.length - 1]! < max; v += step)
    ticks.push(+v.toPrecision(6));
  return ticks;
};

const fmt = (v: number) => (Math.abs(v) >= 1000 ? `${+(v / 1000).toFixed(1)}k` : `${+v.toPrecision(3)}`);

/** A line chart as inline SVG: x = seconds since the start. */
function lineChart(c: ChartOptions): string {
  const W = 640;
  const H = 270;
  const L = 56;
  const R = 12;
  const T = 40;
  const B = 36;
  const n = Math.max(1, ...c.lines.map((l) => l.values.length));
  const all = c.lines.flatMap((l) => l.values.filter((v) => Number.isFinite(v)));
  // The axis fits the data: linear from 0 to a round tick just above it (a ratio around 0.04 is drawn
  // on 0–0.05, not 0–1); log over the decades it spans (latencies of 13–25 ms on 10–100 ms).
  const axis = sharedYAxis([all], { log: c.log === true });
  const { ticks } = axis;
  const yMax = axis.max;
  const lo = c.log ? Math.log10(axis.min) : 0;
  const hi = c.log ? Math.log10(axis.max) : axis.max;
  const px = (i: number) => L + ((W - L - R) * i) / Math.max(1, n - 1);
  const py = (v: number) => {
    const u = c.log ? Math.log10(Math.max(v, 10 ** lo)) : v;
    return T + (H - T - B) * (1 - (u - lo) / (hi - lo || 1));
  };
  const parts: string[] = [];
  parts.push(
    `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(c.title)}" data-y-max="${yMax}">`,
  );
  parts.push(`<text x="${L}" y="16" class="title">${escapeHtml(c.title)}</text>`);
  if (c.shade) {
    const [a, b] = c.shade;
    parts.push(
      `<rect x="${px(a).toFixed(1)}" y="${T}" width="${Math.max(0, px(b) - px(a)).toFixed(1)}" height="${H - T - B}" class="shade"><title>trigger</title></rect>`,
    );
  }
  for (const t of ticks) {
    const y = py(t).toFixed(1);
    parts.push(`<line x1="${L}" x2="${W - R}" y1="${y}" y2="${y}" class="grid"/>`);
    parts.push(
      `<text x="${L - 6}" y="${y}" class="tick" text-anchor="end" dominant-baseline="middle">${fmt(t)}</text>`,
    );
  }
  const xStep = niceTicks(n)[1] ?? n;
  for (let i = 0; i < n; i += xStep)
    parts.push(
      `<text x="${px(i).toFixed(1)}" y="${H - B + 16}" class="tick" text-anchor="middle">${i}</text>`,
    );
  parts.push(`<text x="${(L + W - R) / 2}" y="${H - 4}" class="axis" text-anchor="middle">seconds</text>`);
  parts.push(
    `<text x="12" y="${(T + H - B) / 2}" class="axis" text-anchor="middle" transform="rotate(-90 12 ${(T + H - B) / 2})">${escapeHtml(c.yLabel)}</text>`,
  );
  const legend: string[] = [];
  c.lines.forEach((line, k) => {
    const color = COLORS[k % COLORS.length];
    // A missing value (no sample in that second; ≤ 0 on a log scale) breaks the line.
    let pen = 'M';
    const d = line.values
      .map((v, i) => {
        if (!Number.isFinite(v) || (c.log && v <= 0)) {
          pen = 'M';
          return '';
        }
        const step = `${pen}${px(i).toFixed(1)},${py(v).toFixed(1)}`;
        pen = 'L';
        return step;
      })
      .join('');
    // Every other line dashed: strategies that behave alike stay distinguishable where they overlap.
    const dash = k % 2 === 1 ? ' stroke-dasharray="6 3"' : '';
    parts.push(
      `<path d="${d}" fill="none" stroke="${color}" stroke-width="1.6"${dash}><title>${escapeHtml(line.name)}</title></path>`,
    );
    legend.push(`<tspan fill="${color}">${k % 2 === 1 ? '╌ ' : '— '}${escapeHtml(line.name)}</tspan>`);
  });
  parts.push(`<text x="${L}" y="32" class="legend">${legend.join('   ')}</text>`);
  parts.push('</svg>');
  return parts.join('');
}

/** A grouped bar chart on a log scale (latency percentiles per policy). */
function barChart(title: string, groups: string[], bars: { name: string; values: number[] }[]): string {
  const W = 640;
  const H = 280;
  const L = 56;
  const T = 28;
  const B = 40;
  const max = Math.max(10, ...bars.flatMap((b) => b.values));
  const hi = Math.ceil(Math.log10(max));
  const lo = 0;
  const py = (v: number) => T + (H - T - B) * (1 - (Math.log10(Math.max(v, 1)) - lo) / (hi - lo));
  const groupW = (W - L - 12) / groups.length;
  const barW = (groupW * 0.8) / bars.length;
  const parts = [
    `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(title)}">`,
  ];
  parts.push(`<text x="${L}" y="16" class="title">${escapeHtml(title)}</text>`);
  for (let e = lo; e <= hi; e++) {
    const y = py(10 ** e).toFixed(1);
    parts.push(`<line x1="${L}" x2="${W - 12}" y1="${y}" y2="${y}" class="grid"/>`);
    parts.push(
      `<text x="${L - 6}" y="${y}" class="tick" text-anchor="end" dominant-baseline="middle">${fmt(10 ** e)} ms</text>`,
    );
  }
  groups.forEach((g, gi) => {
    const x0 = L + gi * groupW + groupW * 0.1;
    parts.push(
      `<text x="${(x0 + groupW * 0.4).toFixed(1)}" y="${H - B + 16}" class="tick" text-anchor="middle">${escapeHtml(g)}</text>`,
    );
    bars.forEach((b, bi) => {
      const v = b.values[gi] ?? 0;
      const y = py(v);
      parts.push(
        `<rect x="${(x0 + bi * barW).toFixed(1)}" y="${y.toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${(H - B - y).toFixed(1)}" fill="${COLORS[bi % COLORS.length]}"><title>${escapeHtml(`${b.name} ${g}: ${v} ms`)}</title></rect>`,
      );
    });
  });
  bars.forEach((b, bi) => {
    parts.push(
      `<text x="${W - 16}" y="${T + 14 + 14 * bi}" text-anchor="end" class="legend" fill="${COLORS[bi % COLORS.length]}">${escapeHtml(b.name)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('');
}

function amplificationCharts(r: AmplificationResult): string[] {
  const o = r.options;
  const shade: [number, number] = [o.triggerStartMs / 1000, (o.triggerStartMs + o.triggerDurationMs) / 1000];
  const per = (f: (st: AmplificationResult['strategies'][number]) => readonly number[]): Line[] =>
    r.strategies.map((st) => ({ name: st.name, values: f(st) }));
  const div = (a: readonly number[], b: readonly number[]) => a.map((v, i) => (b[i]! > 0 ? v / b[i]! : 0));
  return [
    lineChart({
      title: 'Load on the dependency ÷ offered load',
      yLabel: '×',
      lines: per((s) => div(s.series.attempts, s.series.offered)),
      shade,
    }),
    lineChart({
      title: 'Goodput: user requests answered in time, per second',
      yLabel: 'rps',
      lines: per((s) => s.series.goodput),
      shade,
    }),
    lineChart({
      title: 'Retry ratio: retries ÷ user requests',
      yLabel: 'ratio',
      lines: per((s) => div(s.series.retries, s.series.offered)),
      shade,
    }),
    lineChart({
      title: 'Dependency p99 response time (log scale)',
      yLabel: 'ms',
      lines: per((s) => s.series.p99Ms),
      shade,
      log: true,
    }),
    lineChart({
      title: 'Dependency p50 response time (log scale)',
      yLabel: 'ms',
      lines: per((s) => s.series.p50Ms),
      shade,
      log: true,
    }),
    lineChart({
      title: 'Requests waiting in the dependency queue',
      yLabel: 'requests',
      lines: per((s) => s.series.queue),
      shade,
    }),
  ];
}

function tailCharts(r: TailResult): string[] {
  return [
    barChart(
      'Fan-out completion time by policy (log scale)',
      ['p50', 'p99', 'p99.9'],
      r.strategies.map((s) => ({ name: s.label, values: [s.fanoutMs.p50, s.fanoutMs.p99, s.fanoutMs.p999] })),
    ),
    lineChart({
      title: 'Fan-out p99 per second (log scale)',
      yLabel: 'ms',
      lines: r.strategies.map((s) => ({ name: s.label, values: s.series.p99Ms })),
      log: true,
    }),
    lineChart({
      title: 'Extra requests (hedges ÷ sub-requests) per second',
      yLabel: 'ratio',
      lines: r.strategies.map((s) => ({ name: s.label, values: s.series.extraLoad })),
    }),
  ];
}

function instancesCharts(r: InstancesResult): string[] {
  return [
    lineChart({
      title: 'User requests answered 200, per second',
      yLabel: 'share',
      lines: r.strategies.map((s) => ({ name: s.label, values: s.series.success })),
    }),
    lineChart({
      title: 'Share of attempts sent to the sick instances, per second',
      yLabel: 'share',
      lines: r.strategies.map((s) => ({ name: s.label, values: s.series.sickShare })),
    }),
  ];
}

function overloadCharts(r: OverloadResult): string[] {
  const seconds = r.configs[0]?.series.goodput.length ?? 0;
  const charts = [
    lineChart({
      title: `Requests answered within the user's deadline, per second (first ${r.options.warmupMs / 1000} s: warm-up)`,
      yLabel: 'rps',
      lines: [
        ...r.configs.map((c) => ({ name: c.label, values: c.series.goodput })),
        { name: 'capacity', values: new Array<number>(seconds).fill(r.supplier.capacityRps) },
      ],
    }),
    barChart(
      'Latency of the requests the supplier ran, ms (log scale)',
      ['p50', 'p99'],
      r.configs.map((c) => ({ name: c.label, values: [c.admittedLatencyMs.p50, c.admittedLatencyMs.p99] })),
    ),
  ];
  const limited = r.configs.filter((c) => c.series.limit.some((v) => v > 0));
  if (limited.length > 0)
    charts.push(
      lineChart({
        title: "Clients' adaptive concurrency limit (mean over the clients)",
        yLabel: 'calls',
        lines: limited.map((c) => ({ name: c.label, values: c.series.limit })),
      }),
    );
  return charts;
}

/**
 * A self-contained HTML page for a result: the table, and time-series charts as inline SVG. No script,
 * no stylesheet or font from elsewhere: it opens from disk, offline.
 */
export function formatSimulationHtml(result: SimulationResult): string {
  const charts =
    result.scenario === 'amplification'
      ? amplificationCharts(result)
      : result.scenario === 'tail'
        ? tailCharts(result)
        : result.scenario === 'overload'
          ? overloadCharts(result)
          : instancesCharts(result);
  const title = `prazo simulate ${result.scenario} — seed ${result.options.seed}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1340px; }
pre { background: #f6f6f6; padding: 12px; overflow-x: auto; font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
svg { background: #fff; border: 1px solid #ddd; }
.title { font-size: 13px; font-weight: 600; }
.tick, .axis { font-size: 10px; fill: #555; }
.legend { font-size: 11px; font-weight: 600; }
.grid { stroke: #eee; }
.shade { fill: #fbe3e3; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<pre>${escapeHtml(formatSimulationTable(result))}</pre>
<div class="charts">
${charts.join('\n')}
</div>
<details><summary>Options</summary><pre>${escapeHtml(JSON.stringify(result.options, null, 2))}</pre></details>
</body>
</html>
`;
}
