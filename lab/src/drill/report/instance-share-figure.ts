import { fleetInstanceLabels } from '../phase-plan.js';
import type { DrillConfig } from '../services/spec.js';
import type { DrillReport } from './drill-report.js';

/** Width of the stacked bar of one sample, in characters (one character = 2.5 %). */
const BAR = 40;
/** Glyph of each instance in the stacked bar, by index: the sick one, the slow one, the healthy ones. */
const GLYPHS = ['█', '▒', '·', '░'];

const percent = (share: number) => `${Math.round(share * 100)} %`.padStart(5);

/**
 * A text figure of each supplier instance's share of the requests over the fleet phase, one line per
 * sample interval and configuration, from a drill report (`prazo drill --json`): the share as a number
 * per instance and a stacked bar. Plain text, so that it reads the same in a terminal and in a
 * Markdown code block (docs/instances.md holds one).
 *
 * @example
 * instanceShareFigure(JSON.parse(readFileSync('drill.json', 'utf8')), ['naive', 'prazo']);
 */
export function instanceShareFigure(
  report: DrillReport,
  configs: readonly DrillConfig[] = report.columns,
): string {
  const phase = report.phases.find((p) => p.name === 'fleet');
  if (!phase) return 'The report has no fleet phase (one instance sick, one slow).\n';
  const labels = fleetInstanceLabels(report.options);
  const glyphs = labels.map((label, i) => `${GLYPHS[i] ?? '?'} ${label}`).join('   ');
  const head = labels.map((label) => label.padStart(Math.max(8, label.length))).join('  ');
  const out = [
    `Share of the requests each supplier instance received, ${phase.label} (${phase.startMs / 1000}–${phase.endMs / 1000} s), per ${report.timeline.sampleMs} ms`,
    `bar: ${glyphs}`,
    '',
  ];
  for (const config of configs) {
    const samples = (report.timeline.samples[config] ?? []).filter((s) => s.phase === 'fleet');
    out.push(`${config.padEnd(12)}   t  ${head}`);
    for (const sample of samples) {
      const counts = sample.instanceRequests ?? [];
      const total = counts.reduce((sum, n) => sum + n, 0);
      const shares = labels.map((_, i) => (total > 0 ? (counts[i] ?? 0) / total : 0));
      const cells = labels.map((label, i) => percent(shares[i]!).padStart(Math.max(8, label.length)));
      out.push(
        `${''.padEnd(12)}${(sample.tMs / 1000).toFixed(1).padStart(5)}  ${cells.join('  ')}  ${total > 0 ? bar(shares) : '(no request)'}`,
      );
    }
    const whole = report.configs[config]?.fleet?.instanceShares ?? [];
    out.push(
      `${''.padEnd(12)}phase  ${labels
        .map((label, i) => {
          const share = whole[i];
          return (share === null || share === undefined ? '–' : percent(share)).padStart(
            Math.max(8, label.length),
          );
        })
        .join('  ')}`,
      '',
    );
  }
  return `${out.join('\n')}`;
}

/** A stacked bar of `BAR` characters: each share rounded so that the bar is always full. */
function bar(shares: readonly number[]): string {
  let text = '';
  let cumulative = 0;
  let drawn = 0;
  shares.forEach((share, i) => {
    cumulative += share;
    const end = Math.round(cumulative * BAR);
    text += (GLYPHS[i] ?? '?').repeat(Math.max(0, end - drawn));
    drawn = Math.max(drawn, end);
  });
  return text;
}
