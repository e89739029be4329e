/**
 * The soak's dependency: two doubles in a child process (so the soak's handle counts, heap and
 * event-loop delay are the client's alone). Driven over IPC by bench/soak.ts:
 *   parent → { type: 'stats' } | { type: 'stop' };  child → { type: 'ready', urls } | { type: 'stats', stats }.
 */
import { type BehaviourInput, startDoubles } from '@prazo/lab/double';

/**
 * About 10 % of requests meet a fault, mixed: 503s, resets before headers and mid-body, hangs (cut by
 * the client's read timeout), a 429 with a short Retry-After, and instance 0 is the slow one (a 60 ms
 * pause on 5 % of its requests: what hedging is for).
 */
export const SOAK_BEHAVIOURS: readonly BehaviourInput[] = [
  {
    latency: {
      type: 'mixture',
      base: { type: 'fixed', ms: 1 },
      tail: { type: 'fixed', ms: 60 },
      tailShare: 0.05,
    },
    statuses: [{ status: 503, share: 0.03 }],
    resetBeforeHeaders: 0.005,
    resetMidBody: 0.005,
    hang: 0.005,
  },
  {
    latency: { type: 'fixed', ms: 1 },
    statuses: [
      { status: 503, share: 0.03 },
      { status: 502, share: 0.01 },
      { status: 429, share: 0.005, retryAfter: '0' },
    ],
    resetBeforeHeaders: 0.005,
    resetMidBody: 0.005,
    hang: 0.005,
  },
];

const group = await startDoubles(SOAK_BEHAVIOURS.length, {
  seed: 9,
  keepRequests: 0,
  behaviour: (i) => SOAK_BEHAVIOURS[i],
});
const send = (message: unknown) => process.send?.(message);
process.on('message', async (message: { type?: string }) => {
  if (message.type === 'stats') send({ type: 'stats', stats: group.stats() });
  if (message.type === 'stop') {
    await group.close();
    process.disconnect?.();
  }
});
// The parent died without saying stop: do not linger.
process.on('disconnect', () => {
  void group.close().finally(() => process.exit(0));
});
send({ type: 'ready', urls: group.urls });
