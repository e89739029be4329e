/**
 * `@prazo/lab/overload`: the overload experiment and the transient, for the drill, the tests and the
 * benches. Apart from the lab's main entry because they load undici, whose first load sets the
 * process's global dispatcher: importing `@prazo/lab` itself changes nothing global.
 *
 * @packageDocumentation
 */
export type { OverloadConfig, OverloadFigures, OverloadRunOptions } from './overload-run.js';
export { OVERLOAD_CONFIGS, runOverload } from './overload-run.js';
export type {
  TransientConfig,
  TransientFigures,
  TransientRunOptions,
  TransientSpan,
} from './transient-run.js';
export { runTransient, TRANSIENT_CONFIGS } from './transient-run.js';
