/**
 * Generates `examples/checkout-balance.csv`: six minutes of calls from a checkout service to its balance
 * lookup. Five minutes are healthy (log-normal latency, median ≈ 61 ms, p99 ≈ 180 ms, a rare 503); the
 * fourth minute is degraded (latency in seconds, many client timeouts at 5 s and fast 503s). Seeded, so
 * the file is the same on every run.
 *
 * Run: npx tsx examples/make-checkout-balance.ts
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRandom } from '../lab/src/random.js';

const SEED = 20261202;
const START_MS = Date.parse('2026-12-02T12:00:00Z');
const RPS = 50;
const MINUTES = 6;
const DEGRADED_MINUTE = 3;
// Log-normal: p99 = median × exp(2.326 σ); σ = ln 3 / 2.326 puts the p99 at 3 × the median. The median
// is tuned so that this seed's sample p99 lands just under 180 ms, the article's example dependency.
const HEALTHY_MEDIAN_MS = 61;
const HEALTHY_SIGMA = Math.log(3) / 2.326;
const CLIENT_TIMEOUT_MS = 5000;

const random = createRandom(SEED);
/** Standard normal by Box–Muller. */
const normal = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
const logNormal = (medianMs: number, sigma: number): number => medianMs * Math.exp(sigma * normal());

const rows = ['timestamp,latency_ms,status'];
for (let minute = 0; minute < MINUTES; minute++) {
  const degraded = minute === DEGRADED_MINUTE;
  for (let i = 0; i < RPS * 60; i++) {
    const at = START_MS + minute * 60_000 + Math.floor(((i + random()) * 1000) / RPS);
    let latencyMs: number;
    let status: string;
    if (!degraded) {
      latencyMs = logNormal(HEALTHY_MEDIAN_MS, HEALTHY_SIGMA);
      status = random() < 0.002 ? '503' : '200';
    } else {
      const roll = random();
      if (roll < 0.35) {
        latencyMs = CLIENT_TIMEOUT_MS;
        status = 'timeout';
      } else if (roll < 0.55) {
        latencyMs = 2 + random() * 8;
        status = '503';
      } else {
        latencyMs = Math.min(CLIENT_TIMEOUT_MS, logNormal(2500, 0.4));
        status = '200';
      }
    }
    rows.push(`${new Date(at).toISOString()},${latencyMs.toFixed(1)},${status}`);
  }
}

const target = fileURLToPath(new URL('./checkout-balance.csv', import.meta.url));
writeFileSync(target, `${rows.join('\n')}\n`);
console.log(`wrote ${rows.length - 1} calls to ${target}`);
