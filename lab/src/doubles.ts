/**
 * `@prazo/lab/double`: the dependency double alone (one, or a group of instances), for the tests
 * and benches that only need a dependency to call — without the simulator and the rest of the lab's
 * main entry, which a test process would otherwise load for nothing.
 *
 * @packageDocumentation
 */
export type { Behaviour, BehaviourInput, Outcome, ShareInput, StatusShare } from './behaviour.js';
export type { Double, DoubleOptions } from './double.js';
export { ADMIN_PREFIX, DEFAULT_DOUBLE_OPTIONS, startDouble } from './double.js';
export type { DoubleGroup, DoubleGroupOptions } from './double-group.js';
export { MAX_INSTANCES, startDoubles } from './double-group.js';
export type { DoubleStats, FaultCounts, RequestRecord } from './double-stats.js';
