/**
 * `prazo/fleet`: the fleet's latency from Prometheus's HTTP API — the API client, the healthy p99 of
 * every process together (`readFleetLatency`, what `prazo calibrate --prometheus` runs), a feed that
 * keeps a dependency's p95/p99 fresh from it, the per-process drift check, the PromQL builders, and the
 * errors these raise (each a `PrometheusError`, matched by `code`).
 *
 * @packageDocumentation
 */
export type { PrometheusErrorCode, PrometheusErrorContext } from '../errors.js';
export {
  PrometheusBadResponseError,
  PrometheusError,
  PrometheusHttpError,
  PrometheusNoDataError,
  PrometheusNotFiniteError,
  PrometheusQueryError,
  PrometheusUnavailableError,
  PrometheusWrongMetricTypeError,
} from '../errors.js';
export type {
  CalibrateFn,
  DriftAssessment,
  DriftDirection,
  RecalibrationPlan,
} from '../latency/drift-check.js';
export { assessDrift, planRecalibration } from '../latency/drift-check.js';
export type { InstantSample, NativeHistogramSample, RangeSeries } from './api-response.js';
export type { FleetDriftOptions, FleetDriftReport, ProcessDrift, ProcessTimeout } from './fleet-drift.js';
export { assessFleetDrift, checkFleetDrift } from './fleet-drift.js';
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
} from './fleet-latency-feed.js';
export { createFleetLatencyFeed, FLEET_LATENCY_FEED_DEFAULTS } from './fleet-latency-feed.js';
export type { LabelMatcher } from './label-matchers.js';
export { formatLabelMatchers, parseLabelMatchers } from './label-matchers.js';
export type { PrometheusApi, PrometheusApiOptions, QueryRange } from './prometheus-api.js';
export { createPrometheusApi, PROMETHEUS_API_DEFAULTS } from './prometheus-api.js';
export type { FleetHistogram, HistogramKind } from './promql.js';
export { bucketIncreaseQuery, quantileQuery, requestOutcomeQuery } from './promql.js';
export type { FleetLatencyQuery, FleetLatencyReport, FleetQueries } from './read-fleet-latency.js';
export { FLEET_LATENCY_DEFAULTS, readFleetLatency } from './read-fleet-latency.js';
