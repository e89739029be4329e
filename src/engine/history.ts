import { CancelledError, type PrazoError } from '../errors.js';
import type { Call } from './call.js';
import type { AttemptRecord } from './response.js';

/** A prazo error raised by a dependency call: it also carries the call's attempts. */
export type DependencyError = PrazoError & {
  /** Name of the dependency. */
  readonly dependency: string;
  /** Every attempt of the call, in order (instance, kind, phase, duration, outcome, status, code). */
  readonly attempts: readonly AttemptRecord[];
};

/** Attaches the call's history to `error` (once) and returns it. */
export function withHistory<E extends Error>(error: E, call: Call, dependency: string): E {
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
