/**
 * The dashboard's browser code. It is embedded in the page with `Function.prototype.toString`, so it
 * must be self-contained: no imports, no references to anything outside its body. The chart geometry
 * it shares with tests comes in as an argument (`scale`: the functions of ./chart-scale.ts).
 */

import type { ChartScale, YAxis } from './chart-scale.js';

/** One field of a sample: a figure, the phase's name, or per-instance counts. */
export type SampleValue = number | string | null | number[];

/** What the page draws (the `/data` endpoint, or the data embedded in the HTML report). */
export interface DashboardData {
  title: string;
  done: boolean;
  elapsedMs: number;
  totalMs: number;
  sampleMs: number;
  poolSize: number;
  retryRatioAlert: number;
  phases: Array<{ name: string; label: string; startMs: number; endMs: number }>;
  samples: Record<string, Array<Record<string, SampleValue>>>;
  /** The supplier instances, by index, as the per-instance chart names them (`#0 sick (503)` …). */
  instanceLabels?: string[];
  /** The configurations drawn, in column order (naive, prazo, then the peers that ran). */
  columns?: string[];
  /** Summary rows once the drill has finished: [label, one figure per column, what the row means]. */
  summary: string[][] | null;
  /** Where a peer matches or beats prazo, in sentences (empty without peers). */
  comparison?: string[];
  tradeOffs?: string[];
  checks: Array<{ name: string; pass: boolean; detail: string }> | null;
  /**
   * The overload experiment once it ran: its heading, the configurations, their goodput as a share of
   * the supplier's capacity, and its rows ([label, one figure per configuration, what it means]).
   */
  overload?: { heading: string; configs: string[]; goodputShares: number[]; rows: string[][] } | null;
  /** The deadline waterfalls sampled so far, drawn by the server (`renderWaterfallsHtml`). */
  waterfallsHtml?: string;
}

/**
 * Draws the dashboard into `document.body`'s `#charts` element, then (live) polls `/data` every second.
 * The panels of one metric (one per configuration) share one y axis. Each chart is an inline SVG
 * carrying `data-points` (points drawn), `data-ticks` and `data-y-min`/`data-y-max` (its y axis) for
 * tests.
 */
export function dashboardClient(initial: DashboardData | null, live: boolean, scale: ChartScale): void {
  // The few DOM members used here, typed locally: the project compiles without the DOM library.
  interface Node {
    id: string;
    className: string;
    innerHTML: string;
    textContent: string | null;
    readonly firstChild: Node | null;
    appendChild<T extends Node>(child: T): T;
    removeChild(child: Node): void;
    setAttribute(name: string, value: string): void;
    /** SVG text only, and only in a browser (the unit tests' document estimates widths instead). */
    getComputedTextLength?(): number;
  }
  interface Doc {
    getElementById(id: string): Node | null;
    createElement(tag: string): Node;
    createElementNS(ns: string, tag: string): Node;
  }
  const document = (globalThis as unknown as { document: Doc }).document;
  const NS = 'http://www.w3.org/2000/svg';
  const COLORS: Record<string, string> = {
    checkout: '#d9480f',
    catalog: '#1971c2',
    inUse: '#5f3dc4',
    peak: '#ae3ec9',
    originals: '#1971c2',
    retries: '#e03131',
    hedges: '#f08c00',
    ratio: '#e03131',
    timeout: '#495057',
    p99: '#2f9e44',
    // Per instance in the fleet phase: the sick one, the slow one, the healthy ones.
    instance0: '#e03131',
    instance1: '#f08c00',
    instance2: '#2f9e44',
    instance3: '#1971c2',
  };
  type Point = [number, number];
  /** `gaps` holds the indexes of points that follow a missing sample: the line breaks there. */
  type Series = { key: string; label: string; points: Point[]; gaps: Set<number> };
  type Sample = Record<string, SampleValue>;
  type Spec = {
    id: string;
    title: string;
    unit: string;
    log?: boolean;
    yMax?: number;
    /** Draw this phase only (its start to its end on the x axis) instead of the whole run. */
    phase?: string;
    lines?: Array<{ y: number; label: string }>;
    series: (samples: Sample[], data: DashboardData) => Series[];
  };
  const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  // Users keep arriving at a fixed rate: an interval in which no request ended is one in which nobody
  // got an answer, drawn as 0 % (a gap would read as "no data").
  const rate = (ok: unknown, failed: unknown): number => {
    const o = num(ok) ?? 0;
    const f = num(failed) ?? 0;
    return o + f > 0 ? (100 * o) / (o + f) : 0;
  };
  const tickLabel = (t: number): string => String(Number(t.toPrecision(6)));
  const series = (
    samples: Sample[],
    key: string,
    label: string,
    value: (s: Sample) => number | null,
  ): Series => {
    const points: Point[] = [];
    const gaps = new Set<number>();
    for (const s of samples) {
      const y = value(s);
      const x = num(s['tMs']);
      if (y !== null && x !== null) points.push([x, y]);
      else if (points.length > 0) gaps.add(points.length);
    }
    return { key, label, points, gaps };
  };
  const perSecond = (data: DashboardData) => 1000 / data.sampleMs;
  /** Instance `i`'s share of the requests the instances received in a sample interval, in %. */
  const instanceShare = (s: Sample, i: number): number | null => {
    const counts = s['instanceRequests'];
    if (!Array.isArray(counts)) return null;
    let total = 0;
    for (const n of counts) total += n;
    return total > 0 ? (100 * (counts[i] ?? 0)) / total : null;
  };
  const SPECS: Spec[] = [
    {
      id: 'success',
      title: 'Success per route',
      unit: '%',
      yMax: 100,
      series: (s) => [
        series(s, 'checkout', '/checkout (calls the supplier)', (x) =>
          rate(x['checkoutOk'], x['checkoutFailed']),
        ),
        series(s, 'catalog', '/catalog (independent)', (x) => rate(x['catalogOk'], x['catalogFailed'])),
      ],
    },
    {
      id: 'pool',
      title: 'Shared pool occupancy',
      unit: 'slots',
      series: (s) => [
        series(s, 'peak', 'peak in interval', (x) => num(x['poolPeak'])),
        series(s, 'inUse', 'in use', (x) => num(x['poolInUse'])),
      ],
    },
    {
      id: 'supplier',
      title: 'Requests reaching the supplier',
      unit: 'req/s',
      series: (s, d) => [
        series(s, 'originals', 'originals', (x) => (num(x['originals']) ?? 0) * perSecond(d)),
        series(s, 'retries', 'retries', (x) => (num(x['retries']) ?? 0) * perSecond(d)),
        series(s, 'hedges', 'hedges', (x) => (num(x['hedges']) ?? 0) * perSecond(d)),
      ],
    },
    {
      id: 'ratio',
      title: 'Retry ratio (retries + hedges) / originals',
      unit: '',
      series: (s) => [series(s, 'ratio', 'retry ratio', (x) => num(x['retryRatio']))],
    },
    {
      id: 'instances',
      title: 'Share of supplier requests per instance, one sick + one slow',
      unit: '%',
      yMax: 100,
      phase: 'fleet',
      series: (s, d) =>
        (d.instanceLabels ?? []).map((label, i) =>
          series(s, `instance${i}`, label, (x) => instanceShare(x, i)),
        ),
    },
    {
      id: 'timeout',
      title: 'Configured timeout vs live p99 (supplier)',
      unit: 'ms',
      log: true,
      series: (s) => [
        series(s, 'timeout', 'configured timeout', (x) => num(x['timeoutMs'])),
        series(s, 'p99', 'live p99', (x) => num(x['liveP99Ms'])),
      ],
    },
  ];

  const el = (name: string, attrs: Record<string, string | number>): Node => {
    const node = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    return node;
  };

  /** Text widths in the charts' units, measured by the browser (estimated without one). */
  const widths = new Map<string, number>();
  const measure =
    (svg: Node, size: number) =>
    (text: string): number => {
      const key = `${size}|${text}`;
      const known = widths.get(key);
      if (known !== undefined) return known;
      const probe = svg.appendChild(el('text', { 'font-size': size }));
      probe.textContent = text;
      const measured = probe.getComputedTextLength ? probe.getComputedTextLength() : 0;
      svg.removeChild(probe);
      const width = measured > 0 ? measured : 0.62 * size * text.length;
      widths.set(key, width);
      return width;
    };

  /** The phase `spec` is restricted to, if any, and the x range drawn. */
  const xRange = (spec: Spec, data: DashboardData) => {
    const only = spec.phase === undefined ? undefined : data.phases.find((p) => p.name === spec.phase);
    const xMin = only ? only.startMs : 0;
    const xMax = only ? Math.max(only.endMs, xMin + 1) : Math.max(data.totalMs, 1);
    return { only, xMin, xMax };
  };

  /** The series of one panel, over the samples that end within the x range. */
  const panelSeries = (spec: Spec, data: DashboardData, config: string): Series[] => {
    const { only, xMin, xMax } = xRange(spec, data);
    // A sample covers the interval that ends at its `tMs`: those ending within the phase are drawn.
    const inRange = (s: Sample) => {
      const t = num(s['tMs']);
      return only === undefined || (t !== null && t > xMin && t <= xMax);
    };
    return spec.series((data.samples[config] ?? []).filter(inRange), data);
  };

  const referenceLines = (spec: Spec, data: DashboardData) =>
    spec.id === 'ratio'
      ? [{ y: data.retryRatioAlert, label: 'alert' }]
      : spec.id === 'pool'
        ? [{ y: data.poolSize, label: 'pool size' }]
        : [];

  function draw(
    svg: Node,
    spec: Spec,
    data: DashboardData,
    config: string,
    all: Series[],
    axis: YAxis,
  ): void {
    const W = 460;
    const L = 46;
    const R = 8;
    const B = 22;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    // The legend first: its entries, measured, fill as many rows as they need above the plot.
    const legendWidth = measure(svg, 10);
    const legend: Array<{ s: Series; x: number; row: number; text: string }> = [];
    let legendX = L;
    let row = 0;
    for (const s of all) {
      const text = `■ ${s.label}`;
      const width = legendWidth(text);
      if (legendX > L && legendX + width > W - R) {
        row++;
        legendX = L;
      }
      legend.push({ s, x: legendX, row, text });
      legendX += width + 14;
    }
    const T = 16 + 12 * row;
    const H = 190 + 12 * row;
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const { only, xMin, xMax } = xRange(spec, data);
    const lines = referenceLines(spec, data);
    const { min, max, ticks } = axis;
    const sx = (x: number) => L + ((W - L - R) * (x - xMin)) / (xMax - xMin);
    const sy = (y: number) => {
      const f = axis.log
        ? (Math.log10(Math.max(y, min)) - Math.log10(min)) / (Math.log10(max) - Math.log10(min))
        : (y - min) / (max - min);
      return H - B - (H - T - B) * Math.min(1, Math.max(0, f));
    };
    const shown = data.phases.filter((p) => !only || p === only);
    shown.forEach((p) => {
      const band = el('rect', {
        x: sx(p.startMs),
        y: T,
        width: sx(p.endMs) - sx(p.startMs),
        height: H - T - B,
        fill: data.phases.indexOf(p) % 2 ? '#f1f3f5' : '#ffffff',
      });
      const tip = band.appendChild(el('title', {}));
      tip.textContent = `${p.name}: ${p.label} (${p.startMs / 1000}–${p.endMs / 1000} s)`;
      svg.appendChild(band);
    });
    const placed = scale.layoutPhaseLabels(
      shown.map((p) => ({ start: sx(p.startMs), end: sx(p.endMs), names: [p.label, p.name] })),
      W - R,
      measure(svg, 9),
    );
    for (const at of placed) {
      const label = el('text', {
        x: at.x,
        y: H - 8,
        'font-size': 9,
        fill: '#868e96',
        'text-anchor': at.anchor,
        class: 'phase-label',
      });
      label.textContent = at.text;
      svg.appendChild(label);
    }
    for (const t of ticks) {
      svg.appendChild(el('line', { x1: L, x2: W - R, y1: sy(t), y2: sy(t), stroke: '#dee2e6' }));
      const text = el('text', {
        x: L - 4,
        y: sy(t) + 3,
        'font-size': 9,
        'text-anchor': 'end',
        fill: '#495057',
        class: 'y-tick',
      });
      text.textContent = tickLabel(t);
      svg.appendChild(text);
    }
    for (const l of lines) {
      svg.appendChild(
        el('line', {
          x1: L,
          x2: W - R,
          y1: sy(l.y),
          y2: sy(l.y),
          stroke: '#212529',
          'stroke-dasharray': '4 3',
        }),
      );
      const text = el('text', { x: W - R - 2, y: sy(l.y) - 3, 'font-size': 9, 'text-anchor': 'end' });
      text.textContent = `${l.label} ${l.y}`;
      svg.appendChild(text);
    }
    if (data.elapsedMs > xMin && data.elapsedMs < xMax && !data.done)
      svg.appendChild(
        el('line', { x1: sx(data.elapsedMs), x2: sx(data.elapsedMs), y1: T, y2: H - B, stroke: '#adb5bd' }),
      );
    let points = 0;
    for (const { s, x, row: r, text } of legend) {
      points += s.points.length;
      const color = COLORS[s.key] ?? '#000';
      if (s.points.length > 0) {
        const d = s.points
          .map(
            ([px, py], j) =>
              `${j === 0 || s.gaps.has(j) ? 'M' : 'L'}${sx(px).toFixed(1)},${sy(py).toFixed(1)}`,
          )
          .join('');
        svg.appendChild(el('path', { d, fill: 'none', stroke: color, 'stroke-width': 1.6 }));
      }
      const entry = el('text', { x, y: 11 + 12 * r, 'font-size': 10, fill: color, class: 'legend' });
      entry.textContent = text;
      svg.appendChild(entry);
    }
    svg.setAttribute('data-points', String(points));
    svg.setAttribute('data-ticks', ticks.map(tickLabel).join(' '));
    svg.setAttribute('data-y-min', tickLabel(min));
    svg.setAttribute('data-y-max', tickLabel(max));
    const title = el('title', {});
    title.textContent = `${spec.title} (${config})${spec.unit ? `, ${spec.unit}` : ''}`;
    svg.appendChild(title);
  }

  const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

  function render(data: DashboardData): void {
    const root = document.getElementById('charts');
    if (!root) return;
    const heading = document.getElementById('title');
    if (heading) heading.textContent = data.title;
    const status = document.getElementById('status');
    if (status) {
      const phase = data.phases.find((p) => data.elapsedMs < p.endMs) ?? data.phases[data.phases.length - 1];
      status.textContent = data.done
        ? 'Finished.'
        : `${phase ? (phase.label === phase.name ? phase.name : `${phase.name} (${phase.label})`) : ''} — ${Math.round(data.elapsedMs / 1000)} s of ${Math.round(data.totalMs / 1000)} s`;
    }
    // The key to the phase names under the charts' x axes, where only the short name fits.
    const key = document.getElementById('phases');
    if (key)
      key.innerHTML = data.phases
        .map(
          (p) =>
            `<span class="phase"><b>${esc(p.name)}</b>${p.label === p.name ? '' : ` ${esc(p.label)}`} (${p.startMs / 1000}–${p.endMs / 1000} s)</span>`,
        )
        .join(' · ');
    const columns = data.columns ?? ['naive', 'prazo'];
    for (const spec of SPECS) {
      // One y axis for the metric's panels, side by side: the same height is the same value in each.
      const panels = columns.map((config) => panelSeries(spec, data, config));
      const lines = referenceLines(spec, data).map((l) => l.y);
      const axis = scale.sharedYAxis(
        panels.map((all) => [...lines, ...all.flatMap((s) => s.points.map(([, y]) => y))]),
        spec.log ? { log: true } : spec.yMax !== undefined ? { max: spec.yMax } : {},
      );
      columns.forEach((config, c) => {
        const id = `chart-${spec.id}-${config}`;
        let svg = document.getElementById(id);
        if (!svg) {
          const row =
            document.getElementById(`row-${spec.id}`) ?? root.appendChild(document.createElement('div'));
          if (!row.id) {
            row.id = `row-${spec.id}`;
            row.className = 'row';
          }
          const cell = row.appendChild(document.createElement('figure'));
          const caption = cell.appendChild(document.createElement('figcaption'));
          caption.textContent = `${config}: ${spec.title}${spec.unit ? ` (${spec.unit})` : ''}`;
          svg = cell.appendChild(el('svg', { id, class: 'chart', 'data-chart': `${spec.id}-${config}` }));
        }
        draw(svg, spec, data, config, panels[c]!, axis);
      });
    }
    const waterfalls = document.getElementById('waterfalls');
    if (waterfalls && data.waterfallsHtml !== undefined) waterfalls.innerHTML = data.waterfallsHtml;
    const summary = document.getElementById('summary');
    if (summary && data.summary) {
      // Rows are [label, one figure per column, what the row means].
      const rowsHtml = (table: string[][], width: number) =>
        table
          .map(
            (r) =>
              `<tr><th>${esc(r[0] ?? '')}<div class="why">${esc(r[r.length - 1] ?? '')}</div></th>${r
                .slice(1, width + 1)
                .map((cell) => `<td>${esc(cell)}</td>`)
                .join('')}</tr>`,
          )
          .join('');
      const rows = rowsHtml(data.summary, columns.length);
      const checks = (data.checks ?? [])
        .map(
          (c) => `<li class="${c.pass ? 'pass' : 'fail'}">${c.pass ? '✔' : '✘'} ${c.name}: ${c.detail}</li>`,
        )
        .join('');
      const comparison = (data.comparison ?? []).map((line) => `<li>${esc(line)}</li>`).join('');
      const tradeOffs = (data.tradeOffs ?? []).map((line) => `<li>${esc(line)}</li>`).join('');
      const head = columns.map((c) => `<th>${esc(c)}</th>`).join('');
      const o = data.overload;
      let overload = '';
      if (o) {
        // Goodput as a share of capacity, one bar per configuration, with the 80 % mark.
        const barH = 26;
        const height = o.configs.length * barH + 24;
        const bars = o.configs
          .map((name, i) => {
            const share = Math.max(0, Math.min(1.2, o.goodputShares[i] ?? 0));
            const y = 8 + i * barH;
            return `<text x="0" y="${y + 15}" font-size="12">${esc(name)}</text><rect x="130" y="${y}" width="${Math.round(
              share * 400,
            )}" height="18" fill="#2b6cb0"></rect><text x="${136 + Math.round(share * 400)}" y="${y + 14}" font-size="12">${Math.round(
              share * 100,
            )} %</text>`;
          })
          .join('');
        const mark = `<line x1="${130 + 320}" y1="0" x2="${130 + 320}" y2="${height}" stroke="#c53030" stroke-dasharray="4 3"></line><line x1="530" y1="0" x2="530" y2="${height}" stroke="#999"></line>`;
        const chart = `<svg class="overload" data-bars="${o.configs.length}" width="620" height="${height}" role="img" aria-label="goodput as a share of capacity">${bars}${mark}</svg>`;
        const oHead = o.configs.map((c) => `<th>${esc(c)}</th>`).join('');
        const oRows = rowsHtml(o.rows, o.configs.length);
        overload = `<h3>${esc(o.heading)}</h3><p>goodput ÷ capacity (dashed: 80 %, grey: 100 %)</p>${chart}<table><tr><th></th>${oHead}</tr>${oRows}</table>`;
      }
      summary.innerHTML = `<table><tr><th></th>${head}</tr>${rows}</table>${overload}<ul>${checks}</ul>${
        tradeOffs
          ? `<h3>Where another column gets more checkouts through than prazo, at more supplier load</h3><ul>${tradeOffs}</ul>`
          : ''
      }${comparison ? `<h3>Where a peer matches or beats prazo</h3><ul>${comparison}</ul>` : ''}`;
    }
  }

  if (initial) render(initial);
  if (live) {
    let busy = false;
    const poll = () => {
      if (busy) return;
      busy = true;
      fetch('/data')
        .then((r) => r.json() as Promise<DashboardData>)
        .then((data) => {
          render(data);
          if (data.done) clearInterval(timer);
        })
        .catch(() => {})
        .finally(() => {
          busy = false;
        });
    };
    const timer = setInterval(poll, 1000);
    poll();
  }
}
