/**
 * The dashboard charts' geometry, as pure functions: the y axis side-by-side panels share, and where
 * the phase names go on the x axis. The page embeds them with `Function.prototype.toString` (the live
 * page and the HTML report alike), so each must be self-contained: no imports, no reference to
 * anything outside its own body.
 */

/** A y axis: the range drawn and the ticks labelled on it (the range runs from the first tick to the last). */
export interface YAxis {
  min: number;
  max: number;
  ticks: number[];
  log: boolean;
}

/** How {@link sharedYAxis} fits the axis. */
export interface YAxisOptions {
  /** Decades (1, 10, 100 …) instead of a linear axis from 0. @default false */
  log?: boolean;
  /** A fixed top, whatever the data (a share in %: 100). */
  max?: number;
}

/**
 * One y axis for the side-by-side panels of one metric (naive, prazo and the peers): it fits the
 * highest value of any panel, so that a line at the same height means the same value in every panel
 * — prazo's 60 req/s is drawn at 40 % of naive's 150, not as tall. `panels` holds each panel's values
 * (reference lines such as an alert threshold included); values that are not finite are ignored, and
 * so are values ≤ 0 on a log axis.
 *
 * Linear: from 0 to the first round tick at or above the highest value — a step of 1, 2, 2.5 or 5 ×
 * 10ⁿ, two to four steps, the lowest such top first (then the fewest steps): 50 → 0/25/50,
 * 55 → 0/20/40/60, 0.043 → 0/0.025/0.05. With nothing above 0, the axis is 0–1.
 * Log: from the decade at or below the lowest value to the decade at or above the highest, one decade
 * at least (1–10 with no positive value), a tick on each decade (and on 2× and 5× when it spans one).
 *
 * @example
 * sharedYAxis([[12, 150], [8, 60]]); // { min: 0, max: 150, ticks: [0, 50, 100, 150], log: false }
 */
export function sharedYAxis(panels: ReadonlyArray<ReadonlyArray<number>>, options: YAxisOptions = {}): YAxis {
  const clean = (t: number) => Number(t.toPrecision(12));
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (const values of panels)
    for (const v of values) {
      if (!Number.isFinite(v) || (options.log === true && v <= 0)) continue;
      low = Math.min(low, v);
      high = Math.max(high, v);
    }
  if (options.log === true) {
    const bottom = Number.isFinite(low) ? 10 ** Math.floor(Math.log10(low)) : 1;
    const top = Math.max(Number.isFinite(high) ? 10 ** Math.ceil(Math.log10(high)) : 1, bottom * 10);
    const ticks: number[] = [];
    for (let e = Math.round(Math.log10(bottom)); e <= Math.round(Math.log10(top)); e++)
      ticks.push(clean(10 ** e));
    // One decade: 2× and 5× in between, so that the axis says more than its two ends.
    if (ticks.length === 2) ticks.splice(1, 0, clean(2 * bottom), clean(5 * bottom));
    return { min: ticks[0]!, max: ticks[ticks.length - 1]!, ticks, log: true };
  }
  const top =
    options.max !== undefined && options.max > 0 ? options.max : Number.isFinite(high) && high > 0 ? high : 1;
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
  for (let i = 0; i <= best.n; i++) ticks.push(clean(i * best.step));
  return { min: 0, max: ticks[ticks.length - 1]!, ticks, log: false };
}

/** A phase band on a chart's x axis, in the chart's units (`start` to `end`). */
export interface PhaseBand {
  start: number;
  end: number;
  /** What to call it, longest first (`one instance sick, one slow`, then `fleet`). */
  names: readonly string[];
}

/** Where a phase's name is written: `text` starting at `x` (`anchor: 'start'`) or ending there (`'end'`). */
export interface PhaseLabel {
  band: number;
  text: string;
  x: number;
  anchor: 'start' | 'end';
}

/**
 * Places each phase's name under its band without cutting or overlapping any: the longest of its
 * `names` that fits in the band, from the band's start (`pad` in). A last band too narrow for any
 * (the short recovery at the end of the run) has its shortest name end at the plot's right edge,
 * reaching into the band before it if that band's label leaves room. A band that still has no room
 * gets its shortest name cut to fit with an ellipsis, or no label (its full name stays in the page's
 * phase key and the band's tooltip). `measure` gives a text's width in the chart's units.
 *
 * @example
 * layoutPhaseLabels([{ start: 0, end: 300, names: ['error burst', 'burst'] }, { start: 300, end: 320, names: ['recovery'] }], 320, (t) => 5 * t.length);
 * // [{ band: 0, text: 'error burst', x: 3, anchor: 'start' }, { band: 1, text: 'recovery', x: 317, anchor: 'end' }]
 */
export function layoutPhaseLabels(
  bands: readonly PhaseBand[],
  right: number,
  measure: (text: string) => number,
  pad = 3,
): PhaseLabel[] {
  const gap = 2 * pad;
  const out: PhaseLabel[] = [];
  let usedUntil = Number.NEGATIVE_INFINITY;
  bands.forEach((band, i) => {
    const names = band.names.filter((n) => n.length > 0);
    const shortest = names[names.length - 1];
    if (shortest === undefined) return;
    const x = Math.max(band.start + pad, usedUntil + gap);
    const room = Math.min(band.end, right) - pad - x;
    const fitting = names.find((n) => measure(n) <= room);
    if (fitting !== undefined) {
      out.push({ band: i, text: fitting, x, anchor: 'start' });
      usedUntil = x + measure(fitting);
      return;
    }
    if (i === bands.length - 1) {
      const end = right - pad;
      const fromRight = names.find((n) => end - measure(n) >= usedUntil + gap);
      if (fromRight !== undefined) {
        out.push({ band: i, text: fromRight, x: end, anchor: 'end' });
        usedUntil = end;
        return;
      }
    }
    for (let keep = shortest.length - 1; keep >= 1; keep--) {
      const cut = `${shortest.slice(0, keep)}…`;
      if (measure(cut) <= room) {
        out.push({ band: i, text: cut, x, anchor: 'start' });
        usedUntil = x + measure(cut);
        return;
      }
    }
  });
  return out;
}

/** The functions the dashboard's browser code draws with (see {@link dashboardClient}). */
export const CHART_SCALE = Object.freeze({ sharedYAxis, layoutPhaseLabels });
export type ChartScale = typeof CHART_SCALE;

/** {@link CHART_SCALE} as JavaScript source, for the page's inline script. */
export function chartScaleSource(): string {
  return `{${Object.entries(CHART_SCALE)
    .map(([name, fn]) => `${name}: ${fn.toString()}`)
    .join(', ')}}`;
}
