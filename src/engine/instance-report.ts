import type { InstanceOutcome } from '../balancer/instance-outcome.js';
import { instanceOutcomeOfStatus } from '../balancer/instance-outcome.js';
import type { InstanceTransition } from '../balancer/instance-transition.js';
import type { Classification } from '../policy/classify.js';
import type { DependencyEventName } from './events.js';

/**
 * What one attempt says about the health of its instance, from what the attempt step already knows:
 * the status it got (`classification` null), or the classification of its error and the timeout
 * its code reports (`timeoutOfCode`). The one place the client's view of an
 * attempt becomes the balancer's {@link InstanceOutcome}.
 *
 * - an answer: by its status (`instanceOutcomeOfStatus`: 502/503/504 gateway, 500 error, 429
 *   neutral, the rest success);
 * - cut by prazo for a reason that is not the instance's (a losing hedge copy, the caller's
 *   cancellation, `close()`) or by the call's **deadline** rather than the read timeout: neutral (a
 *   caller that gives 50 ms to an instance answering in 80 ms must not get it ejected);
 * - never written (connect refused, connect timeout, waiting for a pool connection): refused;
 * - its own read timeout: timeout (a latency sample too: the instance is at least that slow);
 * - any other failure after the request may have been written (reset, closed socket): gateway;
 * - an error prazo does not know: error (failure ratio only).
 *
 * The balancer takes a latency sample only from `success` and `timeout`: a fast failure must not
 * make an instance look attractive.
 */
export function instanceOutcomeOfAttempt(
  status: number,
  classification: Classification | null,
  timeout: 'connect' | 'read' | undefined,
  abandoned: boolean,
  byDeadline: boolean,
): InstanceOutcome {
  if (classification === null) return instanceOutcomeOfStatus(status);
  if (abandoned) return 'neutral';
  const reason = classification.reason;
  if (reason === 'deadline-exceeded' || reason === 'cancelled') return 'neutral';
  if (classification.phase === 'connect' || timeout === 'connect') return 'refused';
  if (timeout === 'read') return byDeadline ? 'neutral' : 'timeout';
  if (reason === 'unknown-error') return 'error';
  return 'gateway';
}

/** The event that announces a balancer transition. */
export function instanceEventName(transition: InstanceTransition): DependencyEventName {
  switch (transition.reason) {
    case 'consecutive-failures':
    case 'failure-ratio':
    case 'probe-failed':
      return 'instance-ejected';
    case 'ejection-ended':
      return 'instance-probing';
    case 'probe-succeeded':
    case 'fleet-failing':
      return 'instance-returned';
    case 'connect-failure':
      return 'instance-down';
    case 'down-ended':
    case 'answered':
      return 'instance-up';
    case 'added':
      return 'instance-added';
    case 'removed':
      return 'instance-removed';
    case 'drained':
      return 'instance-drained';
  }
}
