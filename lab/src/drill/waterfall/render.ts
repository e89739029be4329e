import { formatMs as ms } from '@prazo/cli-kit/format';
import type { SpanKind } from './trail.js';
import type { DeadlineWaterfall } from './waterfall.js';

/** Width of a text waterfall's time axis, in characters. */
export const TEXT_AXIS_CELLS = 48;

/**
 * The axis a waterfall is drawn on, in ms since the gateway's arrival: from the earliest row (the
 * user's send, before the arrival) or 0, to its latest end or deadline mark.
 */
export function waterfallAxis(w: DeadlineWaterfall): { fromMs: number; toMs: number } {
  let from = 0;
  let end = w.elapsedMs;
  for (const row of w.rows) {
    from = Math.min(from, row.startMs);
    end = Math.max(end, row.startMs + row.durationMs);
  }
  if (w.limitMs !== null) end = Math.max(end, w.limitMs);
  if (w.userDeadlineMs !== null) end = Math.max(end, w.userDeadlineMs);
  return { fromMs: from, toMs: Math.max(from + 1, end) };
}

/** "prazo · failing /checkout: 504 after 1 903 ms (hedged) · degrade, +12.3 s · 1 of 812 failing · prazo's ledger" */
export function waterfallTitle(w: DeadlineWaterfall): string {
  const which = w.pick === 'failing' ? 'failing' : 'slowest successful';
  const where =
    w.phase === undefined
      ? ''
      : ` · ${w.phase}${w.tMs === undefined ? '' : `, +${(w.tMs / 1000).toFixed(1)} s`}`;
  const among =
    w.pick === 'failing' ? `1 of ${w.candidates} failing` : `slowest of ${w.candidates} successful`;
  const source = w.source === 'ledger' ? "edge from prazo's ledger" : 'edge from its attempts';
  return `${w.config} · ${which} /checkout: ${w.status} after ${ms(w.elapsedMs)} (${w.variant})${where} · ${among} · ${source}`;
}

/**
 * A waterfall as text for a terminal: one line per span — the service, what it was, a bar on a
 * shared time axis from the gateway's arrival, its length, and what the span says — with the
 * deadlines marked down the axis (`|` the deadline prazo's gateway honoured, `:` the user's).
 */
export function formatWaterfallText(w: DeadlineWaterfall, cells = TEXT_AXIS_CELLS): string[] {
  const { fromMs, toMs } = waterfallAxis(w);
  const cellMs = (toMs - fromMs) / cells;
  const column = (at: number) => Math.min(cells - 1, Math.max(0, Math.floor((at - fromMs) / cellMs)));
  const marks = new Map<number, string>();
  if (w.userDeadlineMs !== null) marks.set(column(w.userDeadlineMs), ':');
  if (w.limitMs !== null) marks.set(column(w.limitMs), '|');
  const hopWidth = Math.max(3, ...w.rows.map((r) => r.hop.length));
  const kindWidth = Math.max(4, ...w.rows.map((r) => r.kind.length));
  const lines = [waterfallTitle(w)];
  for (const row of w.rows) {
    const from = column(row.startMs);
    const to = Math.max(from, Math.ceil((row.startMs + row.durationMs - fromMs) / cellMs) - 1);
    let bar = '';
    for (let c = 0; c < cells; c++) {
      if (c >= from && c <= Math.min(to, cells - 1))
        bar += row.kind === 'error' ? BAR.error : row.durationMs < cellMs / 4 ? '▏' : BAR[row.kind];
      else bar += marks.get(c) ?? ' ';
    }
    lines.push(
      `  ${row.hop.padEnd(hopWidth)} ${row.kind.padEnd(kindWidth)} ${bar} ${ms(row.durationMs).padStart(9)}${row.note ? `  ${row.note}` : ''}`,
    );
  }
  const legend: string[] = [
    fromMs < 0 ? `axis ${ms(fromMs)} (the user's send) – ${ms(toMs)}` : `axis 0–${ms(toMs)}`,
  ];
  if (w.limitMs !== null) legend.push(`| deadline the gateway honoured, ${ms(w.limitMs)}`);
  if (w.userDeadlineMs !== null) legend.push(`: the user gives up, ${ms(w.userDeadlineMs)}`);
  lines.push(`  ${''.padEnd(hopWidth + kindWidth + 1)} ${legend.join(' · ')}`);
  return lines;
}

/** Bar characters by kind: solid for the hops' own time and attempts, lighter for waits. */
const BAR: Record<SpanKind, string> = {
  hop: '▒',
  pool: '░',
  call: '▓',
  queue: '░',
  attempt: '█',
  backoff: '░',
  'retry-after': '░',
  'hedge-delay': '░',
  gap: '·',
  error: '✕',
  transit: '─',
};

/** Colours of the page's bars, by kind. */
const COLOR: Record<SpanKind, string> = {
  hop: '#adb5bd',
  pool: '#f08c00',
  call: '#748ffc',
  queue: '#f08c00',
  attempt: '#1971c2',
  backoff: '#e8590c',
  'retry-after': '#e8590c',
  'hedge-delay': '#fab005',
  gap: '#dee2e6',
  error: '#c92a2a',
  transit: '#ced4da',
};

const esc = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * A waterfall as an inline SVG: one bar per span on a shared time axis from the gateway's arrival
 * (a failed attempt in red), each bar's note as its tooltip, the deadline prazo's gateway honoured
 * as a red line and the user's as a dashed grey one. Self-contained, for the live page and the
 * HTML report.
 */
export function renderWaterfallSvg(w: DeadlineWaterfall): string {
  const labelW = 150;
  const barsW = 420;
  const rowH = 16;
  const top = 18;
  const width = labelW + barsW + 70;
  const height = top + w.rows.length * rowH + 22;
  const { fromMs, toMs } = waterfallAxis(w);
  const x = (at: number) => labelW + ((Math.max(fromMs, at) - fromMs) / (toMs - fromMs)) * barsW;
  const parts: string[] = [];
  w.rows.forEach((row, i) => {
    const y = top + i * rowH;
    const failed = row.kind === 'attempt' && /^#\d+ \w+ (failed|failure|aborted|5\d\d)\b/.test(row.note);
    const x0 = x(row.startMs);
    const barW = Math.max(row.kind === 'error' ? 2 : 1, x(row.startMs + row.durationMs) - x0);
    parts.push(
      `<text x="0" y="${y + 12}" font-size="11">${esc(row.hop)} ${esc(row.kind)}</text>`,
      `<rect x="${x0.toFixed(1)}" y="${y + 2}" width="${barW.toFixed(1)}" height="${rowH - 4}" fill="${failed ? '#e03131' : COLOR[row.kind]}" data-kind="${row.kind}"><title>${esc(
        `${row.hop} ${row.kind}: ${ms(row.durationMs)} from +${ms(row.startMs)}${row.note ? ` — ${row.note}` : ''}`,
      )}</title></rect>`,
      `<text x="${(x0 + barW + 3).toFixed(1)}" y="${y + 12}" font-size="10" fill="#495057">${ms(row.durationMs)}</text>`,
    );
  });
  const bottom = top + w.rows.length * rowH;
  const mark = (at: number, color: string, dash: string, label: string, dy: number) =>
    `<line x1="${x(at).toFixed(1)}" y1="${top - 4}" x2="${x(at).toFixed(1)}" y2="${bottom}" stroke="${color}" stroke-width="1.5"${dash}></line><text x="${(x(at) - 2).toFixed(1)}" y="${bottom + dy}" font-size="10" text-anchor="end" fill="${color}">${esc(label)}</text>`;
  if (w.limitMs !== null) parts.push(mark(w.limitMs, '#c92a2a', '', `deadline ${ms(w.limitMs)}`, 11));
  if (w.userDeadlineMs !== null)
    parts.push(
      mark(
        w.userDeadlineMs,
        '#868e96',
        ' stroke-dasharray="4 3"',
        `user gives up ${ms(w.userDeadlineMs)}`,
        21,
      ),
    );
  parts.push(
    `<line x1="${x(0).toFixed(1)}" y1="${top - 4}" x2="${x(0).toFixed(1)}" y2="${bottom}" stroke="#ced4da"></line>`,
    axisLabels(fromMs, toMs, x(0), labelW, barsW),
  );
  return `<svg class="waterfall" data-rows="${w.rows.length}" data-config="${esc(w.config)}" data-pick="${w.pick}" width="${width}" height="${height}" role="img" aria-label="${esc(waterfallTitle(w))}">${parts.join('')}</svg>`;
}

/** The axis's labels: its end, its start when before the arrival, and 0 where it does not crowd them. */
function axisLabels(fromMs: number, toMs: number, zeroX: number, labelW: number, barsW: number): string {
  const label = (x: number, anchor: string, text: string) =>
    `<text x="${x.toFixed(1)}" y="11" font-size="10" text-anchor="${anchor}" fill="#495057">${text}</text>`;
  const labels = [label(labelW + barsW, 'end', ms(toMs))];
  if (fromMs < 0) labels.push(label(labelW, 'start', ms(fromMs)));
  const clear = zeroX < labelW + barsW - 50 && (fromMs === 0 || zeroX > labelW + 50);
  if (clear || fromMs === 0) labels.push(label(zeroX, fromMs === 0 ? 'start' : 'middle', '0'));
  return labels.join('');
}

/**
 * The page's section of waterfalls: per configuration, its failing and its slowest successful
 * /checkout side by side ('' when there is none yet).
 */
export function renderWaterfallsHtml(
  waterfalls: readonly DeadlineWaterfall[],
  configs: readonly string[],
): string {
  if (waterfalls.length === 0) return '';
  const rows = configs
    .map((config) => {
      const own = waterfalls.filter((w) => w.config === config);
      if (own.length === 0) return '';
      const cells = (['failing', 'slow'] as const)
        .map((pick) => own.find((w) => w.pick === pick))
        .filter((w): w is DeadlineWaterfall => w !== undefined)
        .map(
          (w) =>
            `<figure class="waterfall"><figcaption>${esc(waterfallTitle(w))}</figcaption>${renderWaterfallSvg(w)}</figure>`,
        )
        .join('');
      return `<div class="row">${cells}</div>`;
    })
    .join('');
  return `<h3>Where the deadline went: a failing and the slowest successful /checkout per configuration</h3><p>Bars on one time axis from the gateway's arrival; hover a bar for what it says. Red line: the deadline prazo's gateway honoured; dashed: the user gives up. prazo's edge comes from its deadline ledger; the others' from the attempts their client reported (the waits between them inferred).</p>${rows}`;
}

/** The report's text section: per configuration, its failing and its slowest successful /checkout. */
export function formatWaterfallsText(waterfalls: readonly DeadlineWaterfall[] | undefined): string[] {
  if (waterfalls === undefined || waterfalls.length === 0) return [];
  const out = ['Where the deadline went (a failing and the slowest successful /checkout per configuration):'];
  for (const w of waterfalls) out.push('', ...formatWaterfallText(w));
  return out;
}
