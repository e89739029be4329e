/**
 * The one catalogue of prazo's metrics. The Prometheus and OpenTelemetry adapters, the alert rules test
 * and the dashboard test all read it, so a name cannot change in one place and not in the others.
 *
 * Prometheus names follow its conventions (`prazo_` prefix, base units, `_total` on counters);
 * OpenTelemetry names follow the OTel semantic-convention style (dotted namespaces, unit in `unit`, no
 * unit or `_total` in the name, attributes namespaced under `prazo.`).
 *
 * @see https://prometheus.io/docs/practices/naming/ and the OpenTelemetry metrics semantic conventions.
 */

/** Label (Prometheus) of a prazo metric. Every value set is closed and small: no URLs, no ids. */
export type MetricLabel =
  | 'dependency'
  | 'outcome'
  | 'kind'
  | 'phase'
  | 'purpose'
  | 'quantile'
  | 'direction'
  | 'state'
  | 'instance'
  | 'route'
  | 'reason'
  | 'criticality'
  | 'problem';

/** How the metric behaves. */
export type MetricType = 'counter' | 'gauge' | 'histogram';

/** One entry of {@link METRICS}. */
export interface MetricDefinition {
  /** Full Prometheus name with the default `prazo_` prefix. */
  readonly prometheus: string;
  /** OpenTelemetry instrument name. */
  readonly otel: string;
  readonly type: MetricType;
  /** UCUM unit for OpenTelemetry (`s`, `1`, `{request}` …). */
  readonly unit: string;
  /** One-line description, used as Prometheus HELP and OTel description. */
  readonly help: string;
  /** Labels in the order they are declared. */
  readonly labels: readonly MetricLabel[];
}

/** The prefix every Prometheus name in {@link METRICS} carries. */
export const PROMETHEUS_PREFIX = 'prazo_';

/** OpenTelemetry attribute name of each label. */
export const OTEL_ATTRIBUTES: Readonly<Record<MetricLabel, string>> = Object.freeze({
  dependency: 'prazo.dependency',
  outcome: 'prazo.outcome',
  kind: 'prazo.attempt.kind',
  phase: 'prazo.timeout.phase',
  purpose: 'prazo.budget.purpose',
  quantile: 'prazo.latency.quantile',
  direction: 'prazo.drift.direction',
  state: 'prazo.instance.state',
  instance: 'prazo.instance',
  route: 'http.route',
  // Why a call or a request was refused: the client's protections (concurrency, throttle) or the
  // server's admission (expired, insufficient, queue-full …); each metric has its own value set.
  reason: 'prazo.reason',
  criticality: 'prazo.criticality',
  problem: 'prazo.server_timing.problem',
});

/**
 * Instances of one dependency that get an `instance` label of their own (the first ones, in the
 * balancer's order); the others are summed into one series labelled {@link OTHER_INSTANCES}. Bounds
 * the series of the per-instance metrics to 11 per dependency, whatever the size of the fleet.
 */
export const MAX_INSTANCE_LABELS = 10;

/** The `instance` label value of the instances beyond {@link MAX_INSTANCE_LABELS}. */
export const OTHER_INSTANCES = 'other';

/** The closed set of values of every label except `dependency`. */
export const LABEL_VALUES = Object.freeze({
  outcome: Object.freeze(['success', 'failure'] as const),
  kind: Object.freeze(['original', 'retry', 'hedge'] as const),
  phase: Object.freeze(['connect', 'read'] as const),
  purpose: Object.freeze(['retry', 'hedge'] as const),
  quantile: Object.freeze(['0.95', '0.99'] as const),
  direction: Object.freeze(['timeout-too-tight', 'timeout-too-generous'] as const),
  state: Object.freeze(['up', 'down', 'ejected', 'probing', 'draining'] as const),
  reason: Object.freeze(['concurrency', 'throttle'] as const),
  problem: Object.freeze(['malformed', 'too-long', 'too-many', 'too-deep', 'bad-value'] as const),
});

/**
 * Bucket upper bounds of the duration histograms, in seconds: 1 ms to 30 s, denser between 50 ms and
 * 1 s where p99 timeouts usually sit (so `histogram_quantile` interpolates over narrow buckets there).
 */
export const DURATION_BUCKETS_SECONDS: readonly number[] = Object.freeze([
  0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30,
]);

/** Every prazo metric, by key. */
export const METRICS = Object.freeze({
  requests: {
    prometheus: 'prazo_requests_total',
    otel: 'prazo.client.requests',
    type: 'counter',
    unit: '{request}',
    help: 'Logical requests to a dependency that ended, by outcome (all attempts of one call count once).',
    labels: ['dependency', 'outcome'],
  },
  attempts: {
    prometheus: 'prazo_attempts_total',
    otel: 'prazo.client.attempts',
    type: 'counter',
    unit: '{attempt}',
    help: 'Attempts sent to a dependency, by kind: original, retry or hedge.',
    labels: ['dependency', 'kind'],
  },
  retryRatio: {
    prometheus: 'prazo_retry_ratio',
    otel: 'prazo.client.retry_ratio',
    type: 'gauge',
    unit: '1',
    help: 'Extra attempts (retries and hedges) divided by original attempts over the retry budget window.',
    labels: ['dependency'],
  },
  budgetExhausted: {
    prometheus: 'prazo_retry_budget_exhausted_total',
    otel: 'prazo.client.retry_budget.exhaustions',
    type: 'counter',
    unit: '{refusal}',
    help: 'Extra attempts the retry budget refused, by what they were for: retry or hedge.',
    labels: ['dependency', 'purpose'],
  },
  fastFails: {
    prometheus: 'prazo_deadline_fast_fail_total',
    otel: 'prazo.client.deadline.fast_fails',
    type: 'counter',
    unit: '{request}',
    help: 'Pre-call checks that failed because the remaining deadline was below the p99: calls refused before any attempt, and retries not sent.',
    labels: ['dependency'],
  },
  refused: {
    prometheus: 'prazo_requests_refused_total',
    otel: 'prazo.client.requests.refused',
    type: 'counter',
    unit: '{request}',
    help: 'Calls refused before any attempt because the remaining deadline could not hold the p99 (DEADLINE_INSUFFICIENT): never sent, and not counted as originals by the retry budget.',
    labels: ['dependency'],
  },
  timeouts: {
    prometheus: 'prazo_timeouts_total',
    otel: 'prazo.client.timeouts',
    type: 'counter',
    unit: '{attempt}',
    help: 'Attempts cut by a prazo timeout, by phase: connect or read.',
    labels: ['dependency', 'phase'],
  },
  hedges: {
    prometheus: 'prazo_hedges_total',
    otel: 'prazo.client.hedge.sent',
    type: 'counter',
    unit: '{attempt}',
    help: 'Hedged copies sent because the first attempt had not answered by the live p95.',
    labels: ['dependency'],
  },
  hedgesWon: {
    prometheus: 'prazo_hedges_won_total',
    otel: 'prazo.client.hedge.won',
    type: 'counter',
    unit: '{attempt}',
    help: 'Hedged copies whose answer was the one returned.',
    labels: ['dependency'],
  },
  requestDuration: {
    prometheus: 'prazo_request_duration_seconds',
    otel: 'prazo.client.request.duration',
    type: 'histogram',
    unit: 's',
    help: 'Duration of logical requests (all attempts, including waits between them), in seconds.',
    labels: ['dependency', 'outcome'],
  },
  attemptDuration: {
    prometheus: 'prazo_attempt_duration_seconds',
    otel: 'prazo.client.attempt.duration',
    type: 'histogram',
    unit: 's',
    help: 'Duration of single attempts, by kind, in seconds.',
    labels: ['dependency', 'kind'],
  },
  timeoutSeconds: {
    prometheus: 'prazo_timeout_seconds',
    otel: 'prazo.client.timeout',
    type: 'gauge',
    unit: 's',
    help: 'Configured per-attempt timeout, by phase: connect or read, in seconds.',
    labels: ['dependency', 'phase'],
  },
  healthyLatency: {
    prometheus: 'prazo_healthy_latency_seconds',
    otel: 'prazo.client.healthy_latency',
    type: 'gauge',
    unit: 's',
    help: 'Latency quantile (0.95, 0.99) over the healthy slices of the live window, in seconds.',
    labels: ['dependency', 'quantile'],
  },
  timeoutP99Ratio: {
    prometheus: 'prazo_timeout_p99_ratio',
    otel: 'prazo.client.timeout_p99_ratio',
    type: 'gauge',
    unit: '1',
    help: 'Configured read timeout divided by the healthy p99: about the slack (1.4) when calibrated, below 1 when the timeout cuts healthy calls.',
    labels: ['dependency'],
  },
  driftEvents: {
    prometheus: 'prazo_drift_events_total',
    otel: 'prazo.client.drift.events',
    type: 'counter',
    unit: '{event}',
    help: 'Drift-monitor checks that found the read timeout outside the tolerance around healthy p99 × slack, by direction.',
    labels: ['dependency', 'direction'],
  },
  recalibrations: {
    prometheus: 'prazo_recalibrations_total',
    otel: 'prazo.client.recalibrations',
    type: 'counter',
    unit: '{change}',
    help: "Policy changes the drift monitor made in 'auto' mode.",
    labels: ['dependency'],
  },
  fleetLatencyAge: {
    prometheus: 'prazo_fleet_latency_age_seconds',
    otel: 'prazo.client.fleet_latency.age',
    type: 'gauge',
    unit: 's',
    help: 'Seconds since the fleet latency feed last read good figures from Prometheus (absent before the first).',
    labels: ['dependency'],
  },
  fleetLatencyStale: {
    prometheus: 'prazo_fleet_latency_stale',
    otel: 'prazo.client.fleet_latency.stale',
    type: 'gauge',
    unit: '1',
    help: 'Whether the fleet latency figures are stale (1): no good read from Prometheus within the staleness limit.',
    labels: ['dependency'],
  },
  membershipRefreshFailures: {
    prometheus: 'prazo_membership_refresh_failures_total',
    otel: 'prazo.client.membership.refresh_failures',
    type: 'counter',
    unit: '{resolution}',
    help: 'Resolutions of a live set of origins (a resolver function, DNS) that failed, timed out or answered nothing: the last good set was kept.',
    labels: ['dependency'],
  },
  serverTimingIgnored: {
    prometheus: 'prazo_server_timing_ignored_total',
    otel: 'prazo.client.server_timing.ignored',
    type: 'counter',
    unit: '{response}',
    help: 'Answers whose Server-Timing was (partly) ignored when read, by problem: malformed, too-long, too-many, too-deep, bad-value. The answer counts as one opaque interval in the deadline ledger.',
    labels: ['dependency', 'problem'],
  },
  requeues: {
    prometheus: 'prazo_requeues_total',
    otel: 'prazo.client.requeues',
    type: 'counter',
    unit: '{attempt}',
    help: 'Attempts never written (connect refused or timed out) sent again to another instance without using one of the caller’s attempts.',
    labels: ['dependency'],
  },
  instances: {
    prometheus: 'prazo_instances',
    otel: 'prazo.client.instances',
    type: 'gauge',
    unit: '{instance}',
    help: 'Instances of a dependency by state: up, down (connect failed), ejected (outlier), probing, draining.',
    labels: ['dependency', 'state'],
  },
  instanceEjections: {
    prometheus: 'prazo_instance_ejections_total',
    otel: 'prazo.client.instance.ejections',
    type: 'counter',
    unit: '{ejection}',
    help: 'Instances ejected as outliers (consecutive gateway failures, failure ratio, failed probe).',
    labels: ['dependency'],
  },
  instanceShare: {
    prometheus: 'prazo_instance_share',
    otel: 'prazo.client.instance.share',
    type: 'gauge',
    unit: '1',
    help: 'Share of the recent attempts each instance received (the first 10 instances, the rest summed as instance="other").',
    labels: ['dependency', 'instance'],
  },
  instanceInFlight: {
    prometheus: 'prazo_instance_in_flight',
    otel: 'prazo.client.instance.in_flight',
    type: 'gauge',
    unit: '{attempt}',
    help: 'Attempts in flight on each instance (the first 10 instances, the rest summed as instance="other").',
    labels: ['dependency', 'instance'],
  },
  instanceLatency: {
    prometheus: 'prazo_instance_latency_seconds',
    otel: 'prazo.client.instance.latency',
    type: 'gauge',
    unit: 's',
    help: 'Peak-EWMA latency the balancer holds for each instance, in seconds (the first 10 instances, the largest of the rest as instance="other").',
    labels: ['dependency', 'instance'],
  },
  limited: {
    prometheus: 'prazo_requests_limited_total',
    otel: 'prazo.client.requests.limited',
    type: 'counter',
    unit: '{request}',
    help: 'Calls refused locally by an overload protection before any attempt, by reason: concurrency (CONCURRENCY_LIMITED) or throttle (THROTTLED). Never sent, and not counted as originals by the retry budget.',
    labels: ['dependency', 'reason'],
  },
  concurrencyLimit: {
    prometheus: 'prazo_concurrency_limit',
    otel: 'prazo.client.concurrency.limit',
    type: 'gauge',
    unit: '{request}',
    help: 'The adaptive concurrency limit in force: calls a dependency may have in flight (absent when the limit is off).',
    labels: ['dependency'],
  },
  concurrencyInFlight: {
    prometheus: 'prazo_concurrency_in_flight',
    otel: 'prazo.client.concurrency.in_flight',
    type: 'gauge',
    unit: '{request}',
    help: 'Calls holding a slot of the adaptive concurrency limit (absent when the limit is off).',
    labels: ['dependency'],
  },
  concurrencyQueued: {
    prometheus: 'prazo_concurrency_queued',
    otel: 'prazo.client.concurrency.queued',
    type: 'gauge',
    unit: '{request}',
    help: 'Calls waiting for a slot of the adaptive concurrency limit (absent when the limit is off).',
    labels: ['dependency'],
  },
  throttleProbability: {
    prometheus: 'prazo_throttle_probability',
    otel: 'prazo.client.throttle.probability',
    type: 'gauge',
    unit: '1',
    help: 'Probability that adaptive throttling rejects a new call locally: max(0, (requests − K × accepts) / (requests + 1)) over its window (absent when throttling is off).',
    labels: ['dependency'],
  },
} as const satisfies Record<string, MetricDefinition>);

/** Key of a metric in {@link METRICS}. */
export type MetricKey = keyof typeof METRICS;

/**
 * The Prometheus name of a metric under another prefix (`prefix` replaces `prazo_`).
 * @example prometheusName(METRICS.requests, 'shop_') // 'shop_requests_total'
 */
export function prometheusName(metric: MetricDefinition, prefix: string = PROMETHEUS_PREFIX): string {
  return prefix + metric.prometheus.slice(PROMETHEUS_PREFIX.length);
}

/**
 * The series names a metric shows in the Prometheus exposition: the name itself, or for a histogram
 * its `_bucket`, `_sum` and `_count` series.
 */
export function prometheusSeriesNames(
  metric: MetricDefinition,
  prefix: string = PROMETHEUS_PREFIX,
): string[] {
  const name = prometheusName(metric, prefix);
  return metric.type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
}

/**
 * The server admission's metrics (`instrumentAdmission()` in `prazo/prometheus`), apart from the
 * client's {@link METRICS}: a process may publish either set without the other. Labels: `route` (the
 * admission's route keys, at most `maxRoutes` + `other`), `reason` (a refusal reason) and
 * `criticality` (`critical`, `default`, `sheddable`).
 */
export const SERVER_METRICS = Object.freeze({
  admitted: {
    prometheus: 'prazo_server_admitted_total',
    otel: 'prazo.server.admitted',
    type: 'counter',
    unit: '{request}',
    help: 'Requests the admission handed to their handler, by route and criticality.',
    labels: ['route', 'criticality'],
  },
  refused: {
    prometheus: 'prazo_server_refused_total',
    otel: 'prazo.server.refused',
    type: 'counter',
    unit: '{request}',
    help: 'Requests the admission refused, by route, reason (expired, insufficient, queue-expired: 504; queue-full, shed, queue-delay: 503) and criticality.',
    labels: ['route', 'reason', 'criticality'],
  },
  inFlight: {
    prometheus: 'prazo_server_in_flight',
    otel: 'prazo.server.in_flight',
    type: 'gauge',
    unit: '{request}',
    help: 'Requests in their handlers now.',
    labels: [],
  },
  queueLength: {
    prometheus: 'prazo_server_queue_length',
    otel: 'prazo.server.queue.length',
    type: 'gauge',
    unit: '{request}',
    help: 'Requests waiting for an in-flight slot now.',
    labels: [],
  },
  queueOverloaded: {
    prometheus: 'prazo_server_queue_overloaded',
    otel: 'prazo.server.queue.overloaded',
    type: 'gauge',
    unit: '1',
    help: 'Whether CoDel finds the queue overloaded (1): serving newest first and dropping waits above the target.',
    labels: [],
  },
  queueSojourn: {
    prometheus: 'prazo_server_queue_sojourn_seconds',
    otel: 'prazo.server.queue.sojourn',
    type: 'histogram',
    unit: 's',
    help: 'Time the requests that waited for a slot spent in the queue before their handler ran, in seconds.',
    labels: [],
  },
  expectedService: {
    prometheus: 'prazo_server_expected_service_seconds',
    otel: 'prazo.server.expected_service',
    type: 'gauge',
    unit: 's',
    help: "Each route's expected service time in force (its live percentile), in seconds; absent while the route has too few samples.",
    labels: ['route'],
  },
} as const satisfies Record<string, MetricDefinition>);
