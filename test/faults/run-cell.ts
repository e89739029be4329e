/**
 * Runs the cells of one fault row against two real doubles on 127.0.0.1 and reports what happened:
 * the outcome, what the servers received, and how long the call took.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { type DoubleGroup, type DoubleStats, startDoubles } from '@prazo/lab/double';
import { dependency } from '../../src/client/dependency.js';
import { dependencyOver } from '../../src/testing/test-dependency.js';
import { type FaultRow, MATRIX_CLIENT, type RequestKind } from './matrix.js';
import { UNRESOLVABLE_HOST, unresolvableTransport } from './unresolvable-transport.js';

export interface CellResult {
  kind: RequestKind;
  hedge: boolean;
  outcome: string;
  /** Requests received by both instances. */
  seen: number;
  /** Requests received by each instance. */
  seenBy: [number, number];
  /** `Idempotency-Key`s the servers saw more than once. */
  keyRepeats: number;
  elapsedMs: number;
  /** The attempt history the client reported. */
  attempts: string[];
  /** Longest event-loop stall seen while the cell ran, in ms. */
  stallMs: number;
}

let keys = 0;

/** Starts the row's doubles, runs its six cells one after the other, closes everything. */
export async function runRow(row: FaultRow): Promise<CellResult[]> {
  const group = await startDoubles(2, {
    seed: 11,
    keepRequests: 10,
    behaviour: (i) => row.behaviours[i],
  });
  const results: CellResult[] = [];
  try {
    for (const kind of ['GET', 'POST', 'POST+key'] as const) {
      for (const hedge of [false, true]) {
        for (const double of group.instances) double.reset();
        results.push(await runCell(row, kind, hedge, group));
      }
    }
  } finally {
    await group.close();
  }
  return results;
}

async function runCell(row: FaultRow, kind: RequestKind, hedge: boolean, group: DoubleGroup) {
  const urls = group.urls;
  const origins = [...urls];
  if (row.unresolvable) origins[0] = `http://${UNRESOLVABLE_HOST}:${new URL(urls[0]!).port}`;
  const options = {
    name: `matrix-${row.id}`,
    origins,
    latency: { p99Ms: MATRIX_CLIENT.p99Ms },
    userDeadlineMs: row.userDeadlineMs ?? MATRIX_CLIENT.userDeadlineMs,
    attempts: MATRIX_CLIENT.attempts,
    hedge: hedge ? { at: MATRIX_CLIENT.hedgeAtMs } : (false as const),
  };
  const dep = row.unresolvable ? dependencyOver(options, unresolvableTransport) : dependency(options);
  const method = kind === 'GET' ? 'GET' : 'POST';
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const started = performance.now();
  let outcome: string;
  let history: ReadonlyArray<{ kind: string; outcome: string; status?: number; errorCode?: string }> = [];
  try {
    const response = await dep.request({
      method,
      path: `/matrix/${row.id}`,
      ...(kind === 'POST+key' ? { headers: { 'idempotency-key': `matrix-${++keys}` } } : {}),
      ...(method === 'POST' ? { body: '{"item":42}' } : {}),
    });
    history = response.attempts;
    try {
      await response.body.text();
      outcome = `status ${response.status}`;
    } catch {
      outcome = `status ${response.status}, body cut`;
    }
  } catch (error) {
    history = (error as { attempts?: typeof history }).attempts ?? [];
    outcome = `error ${(error as { code?: string }).code ?? (error as Error).name}`;
  }
  const elapsedMs = performance.now() - started;
  loop.disable();
  await dep.close();
  // A request the client gave up on may still be arriving at the double: let it land.
  await sleep(30);
  const [a, b] = group.stats() as [DoubleStats, DoubleStats];
  return {
    kind,
    hedge,
    outcome,
    seen: a.received + b.received,
    seenBy: [a.received, b.received] as [number, number],
    keyRepeats: a.idempotencyKeyRepeats + b.idempotencyKeyRepeats,
    elapsedMs,
    stallMs: loop.max / 1e6,
    attempts: history.map(
      (h) =>
        `${h.kind}:${h.outcome}${h.status === undefined ? '' : `:${h.status}`}${h.errorCode ? `:${h.errorCode}` : ''}`,
    ),
  };
}

/**
 * Loads and warms the code paths (undici, the client, the double) once, so the first cell of the
 * matrix does not pay module loading and compilation inside its read timeout.
 */
export async function warmUp(): Promise<void> {
  const group = await startDoubles(2, { keepRequests: 0 });
  const dep = dependency({
    name: 'matrix-warm-up',
    origins: group.urls,
    latency: { p99Ms: 1_000 },
    userDeadlineMs: 5_000,
    hedge: { at: 1_000 },
  });
  try {
    for (let i = 0; i < 20; i++) {
      const response = await dep.request({
        method: i % 2 ? 'POST' : 'GET',
        path: '/warm-up',
        body: i % 2 ? 'x' : null,
      });
      await response.body.text();
    }
  } finally {
    await dep.close();
    await group.close();
  }
}
