// The list of sub-commands. Each is loaded only when used so `prazo --help` stays fast.
// (Commands are registered here as their issues land.)
import { registerCommand } from './run.js';

registerCommand(
  'drill',
  'degrade a dependency under load: naive settings vs prazo, side by side',
  async () => (await import('./drill.js')).drill,
);
