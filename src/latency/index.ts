/**
 * `prazo/latency`: the latency measures calibration stands on — the histogram, the time-sliced
 * window, the healthy-slice rule — and the reader of latency files (lines, CSV, prazo JSON,
 * Prometheus text) that `prazo calibrate --histogram` uses.
 *
 * @packageDocumentation
 */
export type { CsvParserOptions } from './formats/csv.js';
export { createCsvParser } from './formats/csv.js';
export { detectFormat } from './formats/detect.js';
export { parseHistogramJson } from './formats/histogram-json.js';
export { createLinesParser } from './formats/lines.js';
export type { PrometheusParserOptions } from './formats/prometheus.js';
export { createPrometheusParser } from './formats/prometheus.js';
export type { LatencyFileReport, ReadLatencyFileOptions } from './formats/read-latency-file.js';
export { READ_LATENCY_FILE_DEFAULTS, readLatencyFile } from './formats/read-latency-file.js';
export type { LatencyFileWarning, LatencyFormat, LineParser, ParsedLatency } from './formats/types.js';
export { LATENCY_FORMATS } from './formats/types.js';
export type { ExclusionReason, HealthRule, HealthySelection, SliceStats, SliceSummary } from './healthy.js';
export { HEALTH_RULE_DEFAULTS, selectHealthy } from './healthy.js';
export type { HistogramJson } from './histogram.js';
export { LatencyHistogram } from './histogram.js';
export type { SlicedWindow, SlicedWindowOptions } from './sliced-window.js';
export { createSlicedWindow, SLICED_WINDOW_DEFAULTS } from './sliced-window.js';
