/**
 * prazo — deadline-aware HTTP calls for Node.js.
 *
 * @packageDocumentation
 */
export type { Clock, Timer } from './clock.js';
export { systemClock } from './clock.js';
export type { CallWithDeadlineOptions, DeadlineCallContext } from './deadline/call-with-deadline.js';
export { callWithDeadline } from './deadline/call-with-deadline.js';
export { currentDeadline, withDeadline } from './deadline/context.js';
export type { DeadlineFromHeadersOptions, DeadlineHeadersInput } from './deadline/deadline.js';
export { Deadline } from './deadline/deadline.js';
export type { DeadlineHeaderOptions, HeaderValue, ParsedDeadline } from './deadline/header-codec.js';
export {
  DEADLINE_HEADER,
  GRPC_TIMEOUT_HEADER,
  parseDeadlineHeader,
  parseGrpcTimeout,
} from './deadline/header-codec.js';
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
