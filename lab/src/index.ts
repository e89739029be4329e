/**
 * @prazo/lab — the dependency double, the simulator and the pieces of the drill: the lab of the
 * repository (a workspace, never published), on prazo's entry points only (docs/lab.md).
 *
 * @packageDocumentation
 */
export type { AttemptInfo, AttemptKind } from 'prazo/wire';
export {
  ATTEMPT_HEADER,
  ATTEMPT_KINDS,
  DEADLINE_HEADER,
  formatAttemptHeader,
  parseAttemptHeader,
} from 'prazo/wire';
export type { Behaviour, BehaviourInput, Outcome, ShareInput, StatusShare } from './behaviour.js';
export { DEFAULT_BEHAVIOUR, parseBehaviour, parseBehaviourJson, pickOutcome } from './behaviour.js';
export type { Double, DoubleOptions } from './double.js';
export { ADMIN_PREFIX, DEFAULT_DOUBLE_OPTIONS, startDouble } from './double.js';
export type { DoubleGroup, DoubleGroupOptions } from './double-group.js';
export { MAX_INSTANCES, startDoubles } from './double-group.js';
export type { DoubleStats, FaultCounts, RequestRecord } from './double-stats.js';
export type {
  FixedLatency,
  LatencyDistribution,
  LognormalLatency,
  MixtureLatency,
} from './latency-distribution.js';
export { MAX_DELAY_MS, sampleLatencyMs } from './latency-distribution.js';
export type { Random } from './random.js';
export { createRandom, lognormalMs, standardNormal } from './random.js';
// The incident simulator (`prazo simulate`).
export type {
  ClientStrategy,
  RetryDecision,
  SimUserRequest,
  StrategyContext,
  StrategyName,
  StrategyOptions,
  StrategySettings,
} from './simulate/client-strategies.js';
export { createStrategy, STRATEGY_NAMES } from './simulate/client-strategies.js';
export type { SimEvent, Simulation } from './simulate/engine.js';
export { createSimulation } from './simulate/engine.js';
export { formatSimulationHtml } from './simulate/html.js';
export type { SimRandom } from './simulate/random.js';
export { createSimRandom } from './simulate/random.js';
export type { SimulationResult } from './simulate/report.js';
export { formatSimulationJson, formatSimulationTable } from './simulate/report.js';
export type {
  AmplificationOptions,
  AmplificationResult,
  AmplificationSeries,
  AmplificationStrategyResult,
  CalibrationSource,
  PhaseFigures,
  ProgressListener,
} from './simulate/scenarios/amplification.js';
export {
  AMPLIFICATION_DEFAULTS,
  simulateAmplification,
} from './simulate/scenarios/amplification.js';
export type {
  InstanceKind,
  InstanceLoad,
  InstancesOptions,
  InstancesResult,
  InstancesStrategyName,
  InstancesStrategyResult,
} from './simulate/scenarios/instances.js';
export {
  INSTANCES_DEFAULTS,
  INSTANCES_STRATEGY_NAMES,
  simulateInstances,
} from './simulate/scenarios/instances.js';
export type {
  OverloadConfigName,
  OverloadConfigResult,
  OverloadOptions,
  OverloadResult,
} from './simulate/scenarios/overload.js';
export {
  OVERLOAD_CONFIG_NAMES,
  OVERLOAD_DEFAULTS,
  simulateOverload,
} from './simulate/scenarios/overload.js';
export type {
  HedgeStrategyName,
  TailOptions,
  TailPercentiles,
  TailResult,
  TailStrategyResult,
} from './simulate/scenarios/tail.js';
export {
  HEDGE_STRATEGY_NAMES,
  simulateTail,
  TAIL_AT_SCALE_PAPER,
  TAIL_DEFAULTS,
} from './simulate/scenarios/tail.js';
export type {
  JobStatus,
  ServerModel,
  ServerModelOptions,
  ServerStats,
  SimJob,
} from './simulate/server-model.js';
export { createServerModel } from './simulate/server-model.js';
