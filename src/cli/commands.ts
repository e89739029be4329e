import type { Command } from './command.js';

/** A `prazo` sub-command as the CLI lists it: a one-line summary, and how to load it. */
export interface CommandEntry {
  readonly summary: string;
  /** Loads the command's module only when it runs, so `prazo --help` stays fast. */
  readonly load: () => Promise<Command>;
}

/**
 * The sub-commands, by name. No prototype: `prazo valueOf` or `prazo __proto__` must be an unknown
 * command, not one of Object's methods.
 */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, CommandEntry>, {
    calibrate: {
      summary: 'derive connect/read timeouts and attempts from a healthy p99',
      load: async () => (await import('./calibrate.js')).calibrate,
    },
    pool: {
      summary: "Little's law: what a timeout does to a connection pool",
      load: async () => (await import('./pool.js')).pool,
    },
  }),
);

/**
 * The commands of the lab (lab/, a package of the repository that is not published): `prazo` names
 * where they went instead of calling them unknown.
 */
export const LAB_COMMANDS: readonly string[] = Object.freeze(['drill', 'simulate', 'double']);
