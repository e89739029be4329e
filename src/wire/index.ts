/**
 * `prazo/wire`: what travels between services — the names of prazo's headers and their codecs
 * (deadline and `grpc-timeout`, the attempt header, criticality, `Idempotency-Key`,
 * `Server-Timing`). The client and the server adapters read and write these for you; use them to
 * speak the same headers elsewhere.
 *
 * @packageDocumentation
 */
export type { AttemptInfo, AttemptKind } from './attempt-header.js';
export {
  ATTEMPT_HEADER,
  ATTEMPT_KINDS,
  attemptHeaderValue,
  formatAttemptHeader,
  parseAttemptHeader,
} from './attempt-header.js';
export type { Criticality } from './criticality-header.js';
export { CRITICALITY_HEADER, CRITICALITY_LEVELS, parseCriticality } from './criticality-header.js';
export type { DeadlineHeaderOptions, HeaderValue, ParsedDeadline } from './deadline-header.js';
export {
  DEADLINE_HEADER,
  GRPC_TIMEOUT_HEADER,
  parseDeadlineHeader,
  parseGrpcTimeout,
} from './deadline-header.js';
export type { IdempotencyKeyProblem, ParsedIdempotencyKey } from './idempotency-key-header.js';
export {
  IDEMPOTENCY_KEY_HEADER,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  mintIdempotencyKey,
  parseIdempotencyKey,
  serializeIdempotencyKey,
} from './idempotency-key-header.js';
export type {
  DependencyWait,
  HopReading,
  HopTiming,
  ParsedServerTiming,
  ServerTimingMetric,
  ServerTimingProblem,
} from './server-timing.js';
export { parseServerTiming, readHopTiming, SERVER_TIMING_HEADER } from './server-timing.js';
