/**
 * The dashboard's browser code. It is embedded in the page with `Function.prototype.toString`, so it
 * must be self-contained: no imports, no references to anything outside its body.
 */

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
  checks: Array<{ name: string; pass: boolean; detail: string }> | null;
  /**
   * The overload experiment once it ran: its heading, the configurations, their goodput as a share of
   * the supplier's capacity, and its rows ([label, one figure per configuration, what it means]).
   */
  overload?: { heading: string; configs: string[]; goodputShares: number[]; rows: string[][] } | null;
}

/**
 * Draws the dashboard into `document.body`'s `#charts` element, then (live) polls `/data` every second.
 * Each chart is an inline SVG carrying `data-points` (points drawn) for tests.
 */
export function dashboardClient(initial: DashboardData | null, live: boolean): void {
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
  /**
   * Round axis ticks from 0: a step of 1, 2, 2.5 or 5 × 10ⁿ, two to four of them up to the first tick
   * ≥ `top`, choosing the lowest such top (then the fewest ticks): 50 → 0/25/50, 55 → 0/20/40/60.
   */
  const roundTicks = (top: number): number[] => {
    let best = { end: Number.POSITIVE_INFINITY, n: 0, step: 1 };
    const e0 = Math.floor(Math.log10(top));
    for (let e = e0 - 2; e <= e0 + 1; e++) {
      for (const m of [1, 2, 2.5, 5]) {
        const step = m * 10 ** e;
        const n = Math.ceil(top / step - 1e-9);
        const end = n * step;
        if (n >= 2 && n <= 4 && (end < best.end - 1e-9 || (Math.abs(end - best.end) <= 1e-9 && n < best.n)))
          best = { end, n, step };
      }
    }
    const ticks: number[] = [];
    for (let i = 0; i <= best.n; i++) ticks.push(Number((i * best.step).toPrecision(12)));
    return ticks;
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

  function draw(svg: Node, spec: Spec, data: DashboardData, config: string): void {
    const W = 460;
    const H = 190;
    const L = 46;
    const R = 8;
    const T = 16;
    const B = 22;
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
    const only = spec.phase === undefined ? undefined : data.phases.find((p) => p.name === spec.phase);
    const xMin = only ? only.startMs : 0;
    const xMax = only ? Math.max(only.endMs, xMin + 1) : Math.max(data.totalMs, 1);
    // A sample covers the interval that ends at its `tMs`: those ending within the phase are drawn.
    const inRange = (s: Sample) => {
      const t = num(s['tMs']);
      return only === undefined || (t !== null && t > xMin && t <= xMax);
    };
    const all = spec.series((data.samples[config] ?? []).filter(inRange), data);
    const lines =
      spec.id === 'ratio'
        ? [{ y: data.retryRatioAlert, label: 'alert' }]
        : spec.id === 'pool'
          ? [{ y: data.poolSize, label: 'pool size' }]
          : [];
    let max = spec.yMax ?? 0;
    let min = spec.log ? Number.POSITIVE_INFINITY : 0;
    if (spec.yMax === undefined) {
      for (const s of all) for (const [, y] of s.points) max = Math.max(max, y);
      for (const l of lines) max = Math.max(max, l.y);
      if (!(max > 0)) max = 1;
    }
    let ticks: number[];
    if (spec.log) {
      for (const s of all) for (const [, y] of s.points) if (y > 0) min = Math.min(min, y);
      if (!Number.isFinite(min)) min = 1;
      min = 10 ** Math.floor(Math.log10(min));
      max = 10 ** Math.ceil(Math.log10(Math.max(max, min * 10)));
      ticks = [];
      for (let t = min; t <= max * 1.000001; t *= 10) ticks.push(Number(t.toPrecision(12)));
    } else {
      ticks = roundTicks(max);
      max = ticks[ticks.length - 1]!;
    }
    const sx = (x: number) => L + ((W - L - R) * (x - xMin)) / (xMax - xMin);
    const sy = (y: number) => {
      const f = spec.log
        ? (Math.log10(Math.max(y, min)) - Math.log10(min)) / (Math.log10(max) - Math.log10(min))
        : y / max;
      return H - B - (H - T - B) * Math.min(1, Math.max(0, f));
    };
    data.phases.forEach((p, i) => {
      if (only && p !== only) return;
      svg.appendChild(
        el('rect', {
          x: sx(p.startMs),
          y: T,
          width: sx(p.endMs) - sx(p.startMs),
          height: H - T - B,
          fill: i % 2 ? '#f1f3f5' : '#ffffff',
        }),
      );
      const label = el('text', { x: sx(p.startMs) + 3, y: H - 8, 'font-size': 9, fill: '#868e96' });
      label.textContent = p.name;
      svg.appendChild(label);
    });
    for (const t of ticks) {
      svg.appendChild(el('line', { x1: L, x2: W - R, y1: sy(t), y2: sy(t), stroke: '#dee2e6' }));
      const text = el('text', {
        x: L - 4,
        y: sy(t) + 3,
        'font-size': 9,
        'text-anchor': 'end',
        fill: '#495057',
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
    let legendX = L + 4;
    all.forEach((s) => {
      points += s.points.length;
      const color = COLORS[s.key] ?? '#000';
      if (s.points.length > 0) {
        const d = s.points
          .map(
            ([x, y], j) => `${j === 0 || s.gaps.has(j) ? 'M' : 'L'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`,
          )
          .join('');
        svg.appendChild(el('path', { d, fill: 'none', stroke: color, 'stroke-width': 1.6 }));
      }
      const legend = el('text', { x: legendX, y: 11, 'font-size': 10, fill: color });
      legend.textContent = `■ ${s.label}`;
      svg.appendChild(legend);
      legendX += 14 + 5.6 * s.label.length;
    });
    svg.setAttribute('data-points', String(points));
    svg.setAttribute('data-ticks', ticks.map(tickLabel).join(' '));
    const title = el('title', {});
    title.textContent = `${spec.title} (${config})${spec.unit ? `, ${spec.unit}` : ''}`;
    svg.appendChild(title);
  }

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
        : `${phase ? phase.label : ''} — ${Math.round(data.elapsedMs / 1000)} s of ${Math.round(data.totalMs / 1000)} s`;
    }
    for (const spec of SPECS) {
      for (const config of data.columns ?? ['naive', 'prazo']) {
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
        draw(svg, spec, data, config);
      }
    }
    const summary = document.getElementById('summary');
    if (summary && data.summary) {
      const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
      const columns = data.columns ?? ['naive', 'prazo'];
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
        comparison ? `<h3>Where a peer matches or beats prazo</h3><ul>${comparison}</ul>` : ''
      }`;
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
