export type {
  ClientStrategy,
  RetryDecision,
  StrategyContext,
  StrategyName,
  StrategyOptions,
  StrategySettings,
  UserRequest,
} from './client-strategies.js';
export { createStrategy, STRATEGY_NAMES } from './client-strategies.js';
export type { SimEvent, Simulation } from './engine.js';
export { createSimulation } from './engine.js';
export { formatHtml } from './html.js';
export type { SimRandom } from './random.js';
export { createRandom } from './random.js';
export type { SimulationResult } from './report.js';
export { formatJson, formatTable } from './report.js';
export type {
  AmplificationOptions,
  AmplificationResult,
  AmplificationSeries,
  AmplificationStrategyResult,
  PhaseFigures,
  ProgressListener,
} from './scenarios/amplification.js';
export {
  AMPLIFICATION_DEFAULTS,
  normalizeAmplificationOptions,
  simulateAmplification,
} from './scenarios/amplification.js';
export type {
  HedgeStrategyName,
  Percentiles,
  TailOptions,
  TailResult,
  TailStrategyResult,
} from './scenarios/tail.js';
export {
  HEDGE_STRATEGY_NAMES,
  normalizeTailOptions,
  simulateTail,
  TAIL_AT_SCALE_PAPER,
  TAIL_DEFAULTS,
} from './scenarios/tail.js';
export type { Job, JobStatus, ServerModel, ServerModelOptions, ServerStats } from './server-model.js';
export { createServerModel } from './server-model.js';
