import { CancelledError, type PrazoError } from '../errors.js';
import type { Call } from './call.js';
import type { DeadlineLedger } from './ledger.js';
import type { AttemptRecord } from './response.js';

/** A prazo error raised by a dependency call: it also carries the call's attempts. */
export type DependencyError = PrazoError & {
  /** Name of the dependency. */
  readonly dependency: string;
  /** Every attempt of the call, in order (instance, kind, phase, duration, outcome, status, code). */
  readonly attempts: readonly AttemptRecord[];
  /** Where the call's time went (see `DependencyResponse.ledger`). */
  readonly ledger: DeadlineLedger;
};

/** What precedes the ledger's line in a deadline error's message. */
const LEDGER_MARK = ' Where the time went: ';

/** Attaches the call's history to `error` (once) and returns it. */
export function withHistory<E extends Error>(error: E, call: Call, dependency: string): E {
  const ledger = call.ledger;
  if ((error as { ledger?: unknown }).ledger !== ledger) {
    // The deadline step names the ledger: a call refused before it never started.
    const started = ledger.dependency !== '';
    const now = ledger.clock.now();
    if (!started) {
      ledger.dependency = dependency;
      ledger.startMs = now;
      ledger.limitMs = now;
    }
    ledger.failed(now);
    Object.defineProperty(error, 'ledger', {
      value: ledger,
      enumerable: false,
      configurable: true,
      writable: true,
    });
    // A deadline error says in one line where the time went.
    const code = (error as { code?: unknown }).code;
    if (
      (code === 'DEADLINE_EXCEEDED' || code === 'DEADLINE_INSUFFICIENT') &&
      started &&
      (ledger.queuedMs > 0 || ledger.lastSent() !== null) &&
      !error.message.includes(LEDGER_MARK)
    )
      error.message += `${LEDGER_MARK}${ledger.summary()}.`;
  }
  Object.defineProperty(error, 'attempts', {
    value: call.attempts,
    enumerable: true,
    configurable: true,
    writable: true,
  });
  Object.defineProperty(error, 'dependency', {
    value: dependency,
    enumerable: true,
    configurable: true,
    writable: true,
  });
  return error;
}

/** The error a closed dependency fails calls with (the owner of the dependency gave up on them). */
export function closedError(name: string): Error {
  return new CancelledError(`Dependency ${name} is closed.`);
}
