/**
 * prazo — deadline-aware HTTP calls for Node.js.
 *
 * @packageDocumentation
 */

export { currentCriticality, withCriticality } from './admission/criticality-context.js';
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
  NormalizedDependencyOptions,
} from './client/options.js';
export { DEPENDENCY_DEFAULTS, normalizeDependencyOptions } from './client/options.js';
export type { OverloadSnapshot } from './client/overload-snapshot.js';
export type { Clock, Timer } from './clock.js';
export { systemClock } from './clock.js';
export type { CallWithDeadlineOptions, DeadlineCallContext } from './deadline/call-with-deadline.js';
export { callWithDeadline } from './deadline/call-with-deadline.js';
export { currentDeadline, withDeadline } from './deadline/context.js';
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
export { BOOTSTRAP_PROBES_IN_FLIGHT } from './engine/steps/admit-step.js';
export type { ConcurrencyOptions, ConcurrencySnapshot } from './engine/steps/concurrency-gate.js';
export { CONCURRENCY_MAX_QUEUED_DEFAULT } from './engine/steps/concurrency-gate.js';
export type { RequeueOptions } from './engine/steps/requeue.js';
export { REQUEUE_DEFAULTS } from './engine/steps/requeue.js';
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
  PrometheusBadResponseError,
  PrometheusError,
  PrometheusHttpError,
  PrometheusNoDataError,
  PrometheusNotFiniteError,
  PrometheusQueryError,
  PrometheusUnavailableError,
  PrometheusWrongMetricTypeError,
  ReadTimeoutError,
  RequestFailedError,
  ResolverError,
  RetryAfterExceedsDeadlineError,
  RetryBudgetExhaustedError,
  ServerOverloadedError,
  ThrottledError,
} from './errors.js';
export type { InstantSample, NativeHistogramSample, RangeSeries } from './fleet/api-response.js';
export type {
  FleetDriftOptions,
  FleetDriftReport,
  ProcessDrift,
  ProcessTimeout,
} from './fleet/fleet-drift.js';
export { assessFleetDrift, checkFleetDrift } from './fleet/fleet-drift.js';
export type {
  FleetLatencyErrorEvent,
  FleetLatencyFeed,
  FleetLatencyFeedEventMap,
  FleetLatencyFeedOptions,
  FleetLatencyFeedState,
  FleetLatencySnapshot,
  FleetLatencySource,
  FleetLatencyStaleEvent,
  FleetLatencyUpdateEvent,
} from './fleet/fleet-latency-feed.js';
export {
  createFleetLatencyFeed,
  FLEET_LATENCY_FEED_DEFAULTS,
  normalizeFleetLatencyFeedOptions,
} from './fleet/fleet-latency-feed.js';
export type { LabelMatcher } from './fleet/label-matchers.js';
export { formatLabelMatchers, parseLabelMatchers } from './fleet/label-matchers.js';
export type { PrometheusApi, PrometheusApiOptions, QueryRange } from './fleet/prometheus-api.js';
export { createPrometheusApi, PROMETHEUS_API_DEFAULTS } from './fleet/prometheus-api.js';
export type { FleetHistogram, HistogramKind } from './fleet/promql.js';
export { bucketIncreaseQuery, quantileQuery, requestOutcomeQuery } from './fleet/promql.js';
export type {
  FleetLatencyQuery,
  FleetLatencyReport,
  FleetQueries,
  NormalizedFleetLatencyQuery,
} from './fleet/read-fleet-latency.js';
export {
  FLEET_LATENCY_DEFAULTS,
  normalizeFleetLatencyQuery,
  readFleetLatency,
} from './fleet/read-fleet-latency.js';
export type { CsvParserOptions } from './latency/formats/csv.js';
export { createCsvParser } from './latency/formats/csv.js';
export { detectFormat } from './latency/formats/detect.js';
export { parseHistogramJson } from './latency/formats/histogram-json.js';
export { createLinesParser } from './latency/formats/lines.js';
export type { PrometheusParserOptions } from './latency/formats/prometheus.js';
export { createPrometheusParser } from './latency/formats/prometheus.js';
export type { LatencyFileReport, ReadLatencyFileOptions } from './latency/formats/read-latency-file.js';
export { READ_LATENCY_FILE_DEFAULTS, readLatencyFile } from './latency/formats/read-latency-file.js';
export type {
  LatencyFileWarning,
  LatencyFormat,
  LineParser,
  ParsedLatency,
} from './latency/formats/types.js';
export { LATENCY_FORMATS } from './latency/formats/types.js';
export type {
  ExclusionReason,
  HealthRule,
  HealthySelection,
  SliceStats,
  SliceSummary,
} from './latency/healthy.js';
export { HEALTH_RULE_DEFAULTS, normalizeHealthRule, selectHealthy } from './latency/healthy.js';
export type { HistogramJson } from './latency/histogram.js';
export { LatencyHistogram } from './latency/histogram.js';
export type { SlicedWindow, SlicedWindowOptions } from './latency/sliced-window.js';
export { createSlicedWindow, SLICED_WINDOW_DEFAULTS } from './latency/sliced-window.js';
export type { OriginsDiff } from './membership/diff-origins.js';
export type { DnsOriginsOptions } from './membership/dns-origins.js';
export { DNS_ORIGINS_DEFAULTS, dnsOrigins } from './membership/dns-origins.js';
export type { OriginResolver, OriginsAnswer } from './membership/origin-resolver.js';
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
} from './observe/drift-check.js';
export { assessDrift, planRecalibration } from './observe/drift-check.js';
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
export {
  createDriftMonitor,
  DRIFT_MONITOR_DEFAULTS,
  normalizeDriftMonitorOptions,
} from './observe/drift-monitor.js';
export type { MetricDefinition, MetricKey, MetricLabel, MetricType } from './observe/metric-names.js';
export {
  DURATION_BUCKETS_SECONDS,
  LABEL_VALUES,
  METRICS,
  OTEL_ATTRIBUTES,
  PROMETHEUS_PREFIX,
  prometheusName,
  prometheusSeriesNames,
} from './observe/metric-names.js';
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
export {
  ADAPTIVE_THROTTLE_DEFAULTS,
  acceptedStatus,
  createAdaptiveThrottle,
} from './policy/adaptive-throttle.js';
export type { BackoffInput } from './policy/backoff.js';
export { BACKOFF_DEFAULTS, backoffDelayMs } from './policy/backoff.js';
export type {
  CalibratedPolicy,
  CalibrationOptions,
  CalibrationProfile,
  CalibrationWarning,
  CalibrationWarningCode,
} from './policy/calibrate.js';
export {
  CALIBRATION_DEFAULTS,
  calibrateTimeout,
  MAX_DURATION_MS,
  normalizeCalibrationOptions,
  readTimeoutMs,
  SLACK_RANGE,
} from './policy/calibrate.js';
export type { AttemptOutcome, AttemptPhase, Classification, ClassifyContext } from './policy/classify.js';
export { classify, RETRYABLE_STATUSES } from './policy/classify.js';
export type { GradientLimit, GradientLimitOptions, GradientLimitState } from './policy/gradient-limit.js';
export { createGradientLimit, GRADIENT_LIMIT_DEFAULTS } from './policy/gradient-limit.js';
export type { HeaderRecord } from './policy/header-value.js';
export type { HedgePolicy } from './policy/hedge-delay.js';
export { hedgeDelayMs, shouldHedge } from './policy/hedge-delay.js';
export {
  hasIdempotencyKey,
  IDEMPOTENT_METHODS,
  isHedgeSafe,
  isIdempotent,
  SAFE_METHODS,
} from './policy/idempotency.js';
export type { PoolAnalysis, PoolAnalysisInput, PoolProfile, TimeoutHeadroom } from './policy/littles-law.js';
export {
  analysePool,
  maxHoldTimeMs,
  maxTolerableTimeoutMs,
  slotsNeeded,
  timeoutHeadroom,
  timeToExhaustMs,
} from './policy/littles-law.js';
export type { PlanRetryInput, RetryPlan, RetryRefusalCode } from './policy/plan-retry.js';
export { planRetry } from './policy/plan-retry.js';
export type { RetryAfterReading } from './policy/retry-after.js';
export { parseRetryAfter, RETRY_AFTER_MAX_MS, readRetryAfter } from './policy/retry-after.js';
export type {
  NormalizedRetryBudgetOptions,
  RetryBudget,
  RetryBudgetOptions,
  RetryBudgetState,
} from './policy/retry-budget.js';
export {
  createRetryBudget,
  normalizeRetryBudgetOptions,
  RETRY_BUDGET_DEFAULTS,
} from './policy/retry-budget.js';
export type { FakeClock } from './testing/fake-clock.js';
export { createFakeClock } from './testing/fake-clock.js';
export type { RequestBody } from './transport/transport.js';
export type { Criticality } from './wire/criticality-header.js';
export { CRITICALITY_HEADER, CRITICALITY_LEVELS, parseCriticality } from './wire/criticality-header.js';
export type { DeadlineHeaderOptions, HeaderValue, ParsedDeadline } from './wire/deadline-header.js';
export {
  DEADLINE_HEADER,
  GRPC_TIMEOUT_HEADER,
  parseDeadlineHeader,
  parseGrpcTimeout,
} from './wire/deadline-header.js';
export type { IdempotencyKeyProblem, ParsedIdempotencyKey } from './wire/idempotency-key-header.js';
export {
  IDEMPOTENCY_KEY_HEADER,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  mintIdempotencyKey,
  parseIdempotencyKey,
  serializeIdempotencyKey,
} from './wire/idempotency-key-header.js';
export type {
  DependencyWait,
  HopReading,
  HopTiming,
  ParsedServerTiming,
  ServerTimingMetric,
  ServerTimingProblem,
} from './wire/server-timing.js';
export { parseServerTiming, readHopTiming, SERVER_TIMING_HEADER } from './wire/server-timing.js';
