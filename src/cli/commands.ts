// The list of sub-commands. Each is loaded only when used so `prazo --help` stays fast.
// (Commands are registered here as their issues land.)
import { registerCommand } from './run.js';

registerCommand(
  'calibrate',
  'derive connect/read timeouts and attempts from a healthy p99',
  async () => (await import('./calibrate.js')).calibrate,
);
registerCommand(
  'pool',
  "Little's law: what a timeout does to a connection pool",
  async () => (await import('./pool.js')).pool,
);
registerCommand('double', 'run a dependency double (latency, errors, hangs, resets)', async () => {
  const { runDouble } = await import('./double.js');
  return (argv, io) => runDouble(argv, io);
});
registerCommand(
  'simulate',
  'deterministic incident simulator: retry amplification, hedged fan-outs',
  async () => (await import('./simulate.js')).simulate,
);
registerCommand(
  'drill',
  'degrade a dependency under load: naive settings vs prazo, side by side',
  async () => (await import('./drill.js')).drill,
);
