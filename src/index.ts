/**
 * prazo — deadline-aware HTTP calls for Node.js.
 *
 * The root holds what a service needs to call its dependencies: `dependency()`, `install()`,
 * `prazoInterceptor()`, deadlines and criticality, the errors, the clock, calibration and the drift
 * monitor. Pure policies are in `prazo/policy`, latency measures and files in `prazo/latency`, header
 * codecs in `prazo/wire`, the fleet's Prometheus reader in `prazo/fleet` (the list of the root's runtime
 * exports is pinned by test/package-exports.test.ts: growing it is a decision).
 *
 * @packageDocumentation
 */

export type { InstanceSnapshot, InstanceState, TransitionReason } from './balancer/balancer.js';
export type { BalancerOptions } from './balancer/balancer-options.js';
export { BALANCER_DEFAULTS } from './balancer/balancer-options.js';
export type { Dependency } from './client/dependency.js';
export { dependency } from './client/dependency.js';
export type { ComposableDispatcher, InstallOptions } from './client/install.js';
export { install, uninstall } from './client/install.js';
export type {
  DispatchFunction,
  DispatchOptions,
  PrazoInterceptor,
  PrazoInterceptorOptions,
} from './client/interceptor.js';
export { prazoInterceptor } from './client/interceptor.js';
export type { NodeRequestFunction } from './client/node-http/govern-node-http.js';
export { nodeHttpRequest } from './client/node-http/govern-node-http.js';
export type { GovernedDispatcher } from './client/node-http/governed-request.js';
export type {
  DependencyOptions,
  DependencyTlsOptions,
  HedgeOptions,
  LatencyOption,
} from './client/options.js';
export { DEPENDENCY_DEFAULTS } from './client/options.js';
export type { OverloadSnapshot } from './client/overload-snapshot.js';
export type { Clock, Timer } from './clock.js';
export { systemClock } from './clock.js';
export type { CallWithDeadlineOptions, DeadlineCallContext } from './deadline/call-with-deadline.js';
export { callWithDeadline } from './deadline/call-with-deadline.js';
export { currentDeadline, withDeadline } from './deadline/context.js';
export { currentCriticality, withCriticality } from './deadline/criticality-context.js';
export type { DeadlineFromHeadersOptions, DeadlineHeadersInput } from './deadline/deadline.js';
export { Deadline } from './deadline/deadline.js';
export type { RequestHeaders, RequestOptions } from './engine/call.js';
export { DIAGNOSTICS_CHANNELS } from './engine/diagnostics.js';
export type {
  AttemptEndEvent,
  AttemptStartEvent,
  BudgetExhaustedEvent,
  ConcurrencyLimitEvent,
  DependencyEventName,
  DependencyEvents,
  DependencyListener,
  FastFailEvent,
  HedgeEvent,
  InstanceEvent,
  LimitedEvent,
  MembershipChangedEvent,
  MembershipErrorEvent,
  PolicyEvent,
  RequestEndEvent,
  RequestStartEvent,
  RequeueEvent,
  RetryEvent,
} from './engine/events.js';
export type { DependencyError } from './engine/history.js';
export type {
  DeadlineLedger,
  LedgerAttempt,
  LedgerEntry,
  LedgerShare,
  LedgerWait,
} from './engine/ledger.js';
export type { LatencySource, PolicySnapshot } from './engine/live-latency.js';
export type { AttemptRecord, DependencyResponse, ResponseBody, ResponseHeaders } from './engine/response.js';
export type { RequeueOptions } from './engine/steps/requeue.js';
export type { PrazoErrorCode, PrometheusErrorCode, PrometheusErrorContext } from './errors.js';
export {
  AttemptAbandonedError,
  BodyDestroyedError,
  CancelledError,
  ConcurrencyLimitedError,
  ConnectTimeoutError,
  DeadlineExceededError,
  DeadlineInsufficientError,
  ForeignOriginError,
  InvalidInputError,
  InvalidOptionError,
  isPrazoError,
  PrazoError,
  ReadTimeoutError,
  RequestFailedError,
  ResolverError,
  RetryAfterExceedsDeadlineError,
  RetryBudgetExhaustedError,
  ServerOverloadedError,
  ThrottledError,
} from './errors.js';
export type { FleetDriftReport } from './fleet/fleet-drift.js';
export type {
  CalibrateFn,
  DriftAssessment,
  DriftDirection,
  DriftEvent,
  DriftEventSource,
  DriftSkippedEvent,
  DriftSkipReason,
  RecalibratedEvent,
  RecalibrationPlan,
} from './latency/drift-check.js';
export type { FleetLatencySnapshot, FleetLatencySource } from './latency/fleet-latency-source.js';
export type { OriginsDiff } from './membership/diff-origins.js';
export type { DnsOriginsOptions } from './membership/dns-origins.js';
export { DNS_ORIGINS_DEFAULTS, dnsOrigins } from './membership/dns-origins.js';
export type { OriginResolver, OriginsAnswer } from './membership/origin-resolver.js';
export type {
  DriftCheckResult,
  DriftMode,
  DriftMonitor,
  DriftMonitorEventMap,
  DriftMonitorOptions,
  FleetDriftErrorEvent,
  FleetDriftEvent,
  FleetDriftMonitorOptions,
} from './observe/drift-monitor.js';
export { createDriftMonitor, DRIFT_MONITOR_DEFAULTS } from './observe/drift-monitor.js';
export type {
  InstrumentableDependency,
  InstrumentTarget,
  RecalibratableDependency,
} from './observe/source.js';
export type {
  AdaptiveThrottle,
  AdaptiveThrottleOptions,
  AdaptiveThrottleState,
} from './policy/adaptive-throttle.js';
export type {
  CalibratedPolicy,
  CalibrationOptions,
  CalibrationProfile,
  CalibrationWarning,
  CalibrationWarningCode,
} from './policy/calibrate.js';
export { CALIBRATION_DEFAULTS, calibrateTimeout } from './policy/calibrate.js';
export type { ConcurrencyOptions, ConcurrencySnapshot } from './policy/concurrency-gate.js';
export type {
  GradientLimit,
  GradientLimitOptions,
  GradientLimitState,
  ProbeCounts,
} from './policy/gradient-limit.js';
export type { HeaderRecord } from './policy/header-value.js';
export type { RetryBudget, RetryBudgetOptions, RetryBudgetState } from './policy/retry-budget.js';
export type { FakeClock } from './testing/fake-clock.js';
export { createFakeClock } from './testing/fake-clock.js';
export type { RequestBody } from './transport/transport.js';
export type { Criticality } from './wire/criticality-header.js';
