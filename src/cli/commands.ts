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
