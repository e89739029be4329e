import { type Command, commandTable } from '@prazo/cli-kit';

/** The lab's sub-commands, by name (no prototype: `valueOf` is an unknown command). */
export const COMMANDS = commandTable({
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
});
