import { commandTable } from '@prazo/cli-kit';

/** The sub-commands of `prazo`, by name (no prototype: `prazo valueOf` is an unknown command). */
export const COMMANDS = commandTable({
  calibrate: {
    summary: 'derive connect/read timeouts and attempts from a healthy p99',
    load: async () => (await import('./calibrate.js')).calibrate,
  },
  pool: {
    summary: "Little's law: what a timeout does to a connection pool",
    load: async () => (await import('./pool.js')).pool,
  },
});

/**
 * The commands of the lab (lab/, a package of the repository that is not published): `prazo` names
 * where they went instead of calling them unknown.
 */
export const LAB_COMMANDS: readonly string[] = Object.freeze(['drill', 'simulate', 'double']);
