/**
 * Prints each supplier instance's share of the requests over the drill's fleet phase ("one instance
 * sick, one slow"), from a report written by `prazo drill --json`: the figure in docs/instances.md.
 *
 *   npm run --silent lab -- drill --json > drill.json
 *   npx tsx lab/scripts/drill-instance-shares.ts drill.json [naive,prazo]
 */
import { readFileSync } from 'node:fs';
import type { DrillReport } from '../src/drill/report/drill-report.js';
import { instanceShareFigure } from '../src/drill/report/instance-share-figure.js';
import type { DrillConfig } from '../src/drill/services/spec.js';

const [file, only] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: tsx lab/scripts/drill-instance-shares.ts REPORT.json [config,config…]\n');
  process.exit(2);
}
let report: DrillReport;
try {
  report = JSON.parse(readFileSync(file, 'utf8')) as DrillReport;
} catch (error) {
  process.stderr.write(`drill-instance-shares: cannot read ${file}: ${(error as Error).message}\n`);
  process.exit(2);
}
if (report?.format !== 'prazo-drill-report' || !report.timeline) {
  process.stderr.write(`drill-instance-shares: ${file} is not a report of \`prazo drill --json\`\n`);
  process.exit(2);
}
const configs = only ? (only.split(',') as DrillConfig[]) : report.columns;
process.stdout.write(instanceShareFigure(report, configs));
