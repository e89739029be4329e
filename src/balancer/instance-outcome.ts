/**
 * What one attempt says about the health of the instance that served it. The balancer does not
 * read statuses or errors itself: the attempt classifies once and hands it one of these.
 *
 * - `'success'`: the instance answered as a healthy one would — 2xx, 3xx and the 4xx a server
 *   decides on content (400, 404, 409, 422 …). Its latency is a sample of the peak-EWMA.
 * - `'gateway'`: 502, 503, 504 — the instance (or the proxy in front of it) could not serve.
 *   Counts toward the consecutive-failure rule and the failure ratio.
 * - `'timeout'`: the read timed out. A gateway failure whose elapsed time is also a latency sample
 *   (the instance is at least that slow).
 * - `'refused'`: the connect failed (refused, reset or timed out before anything was written). A
 *   gateway failure that also marks the instance down for `connectDownMs` at once.
 * - `'error'`: 500 and the other 5xx. Counts toward the failure ratio only, not toward the
 *   consecutive rule: a 500 is more often the answer to one bad request than a sign of a sick
 *   instance, and the ratio rule ejects only an instance failing clearly more than its peers —
 *   which a bad deploy on one instance does, and a poison request sent to all of them does not.
 * - `'neutral'`: says nothing about health — 429 (the instance is alive and asks the caller to slow
 *   down; ejecting it would push its load onto peers that share the same quota), a call the caller
 *   cancelled, the losing copy of a hedge.
 */
export type InstanceOutcome = 'success' | 'gateway' | 'timeout' | 'refused' | 'error' | 'neutral';

/**
 * The {@link InstanceOutcome} of an HTTP answer with status `status`.
 *
 * @example
 * instanceOutcomeOfStatus(200); // 'success'
 * instanceOutcomeOfStatus(503); // 'gateway'
 * instanceOutcomeOfStatus(500); // 'error'
 * instanceOutcomeOfStatus(429); // 'neutral'
 */
export function instanceOutcomeOfStatus(status: number): InstanceOutcome {
  if (status === 502 || status === 503 || status === 504) return 'gateway';
  if (status === 429) return 'neutral';
  if (status >= 500 && status <= 599) return 'error';
  return 'success';
}
