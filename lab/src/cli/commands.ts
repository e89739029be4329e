import type { Command } from './command.js';

/** A lab sub-command as the CLI lists it: a one-line summary, and how to load it. */
export interface CommandEntry {
  readonly summary: string;
  /** Loads the command's module only when it runs, so `--help` stays fast. */
  readonly load: () => Promise<Command>;
}

/**
 * The lab's sub-commands, by name. No prototype: `prazo valueOf` or `prazo __proto__` must be an
 * unknown command, not one of Object's methods.
 */
export const COMMANDS: Readonly<Record<string, CommandEntry>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, CommandEntry>, {
    double: {
      summary: 'run a dependency double (latency, errors, hangs, resets)',
      load: async (): Promise<Command> => {
        const { runDouble } = await import('./double.js');
        return (argv, io) => runDouble(argv, io);
      },
    },
    simulate: {
      summary: 'deterministic incident simulator: retry amplification, hedged fan-outs',
      load: async () => (await import('./simulate.js')).simulate,
    },
    drill: {
      summary: 'degrade a dependency under load: naive settings vs prazo, side by side',
      load: async () => (await import('./drill.js')).drill,
    },
  }),
);
