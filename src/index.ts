/**
 * prazo — deadline-aware HTTP calls for Node.js.
 *
 * @packageDocumentation
 */
export type { Clock, Timer } from './clock.js';
export { systemClock } from './clock.js';
export type { PrazoErrorCode } from './errors.js';
export {
  CancelledError,
  DeadlineExceededError,
  DeadlineInsufficientError,
  InvalidInputError,
  InvalidOptionError,
  isPrazoError,
  PrazoError,
} from './errors.js';
export type { FakeClock } from './testing/fake-clock.js';
export { createFakeClock } from './testing/fake-clock.js';
