// The list of sub-commands. Each is loaded only when used so `prazo --help` stays fast.
// (Commands are registered here as their issues land.)
import { registerCommand } from './run.js';

registerCommand('double', 'run a dependency double (latency, errors, hangs, resets)', async () => {
  const { runDouble } = await import('./double.js');
  return (argv, io) => runDouble(argv, io);
});
registerCommand(
  'drill',
  'degrade a dependency under load: naive settings vs prazo, side by side',
  async () => (await import('./drill.js')).drill,
);
