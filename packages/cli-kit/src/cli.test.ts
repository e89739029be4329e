import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { captureCli } from './capture.test-helper.js';
import { commandTable, createCli } from './cli.js';
import { type Command, EXIT } from './command.js';
import { formatMs } from './format.js';

const echo: Command = async (argv, io) => {
  io.stdout.write(`echo ${JSON.stringify(argv)}\n`);
  return argv.includes('--fail') ? EXIT.warning : EXIT.ok;
};

const commands = commandTable({ echo: { summary: 'says its arguments', load: async () => echo } });

const spec = {
  commands,
  usageHead: ['Usage: tool <command>', '', 'Commands:'],
  usageTail: ['', 'More: tool help <command>.'],
  helpHint: 'Run `tool --help`.',
};

describe('createCli: the top level both command lines share', () => {
  const run = createCli(spec);
  const usage =
    'Usage: tool <command>\n\nCommands:\n  echo        says its arguments\n\nMore: tool help <command>.\n';

  it('prints the usage, the commands between its head and tail, for --help, -h and help (exit 0), and with no argument (exit 2)', async () => {
    for (const argv of [['--help'], ['-h'], ['help']])
      expect(await captureCli(run, argv)).toEqual({ code: EXIT.ok, stdout: usage, stderr: '' });
    expect(await captureCli(run, [])).toEqual({ code: EXIT.badInput, stdout: usage, stderr: '' });
  });

  it('runs a command with the arguments after its name, and returns its exit code', async () => {
    expect(await captureCli(run, ['echo', '--x', '1'])).toEqual({
      code: EXIT.ok,
      stdout: 'echo ["--x","1"]\n',
      stderr: '',
    });
    expect((await captureCli(run, ['echo', '--fail'])).code).toBe(EXIT.warning);
  });

  it('turns `help <command>` into `<command> --help`', async () => {
    expect((await captureCli(run, ['help', 'echo'])).stdout).toBe('echo ["--help"]\n');
  });

  it("names an unknown command, Object's own names included, with the hint (exit 2)", async () => {
    for (const name of ['nope', 'valueOf', '__proto__', 'constructor', '--version'])
      expect(await captureCli(run, [name])).toEqual({
        code: EXIT.badInput,
        stdout: '',
        stderr: `prazo: unknown command "${name}". Run \`tool --help\`.\n`,
      });
  });

  it('prints its version with --version and -v when it has one, and says where a command went', async () => {
    const versioned = createCli({
      ...spec,
      version: '1.2.3',
      elsewhere: (name) => (name === 'gone' ? 'prazo: "gone" lives elsewhere.' : undefined),
    });
    for (const flag of ['--version', '-v'])
      expect(await captureCli(versioned, [flag])).toEqual({ code: EXIT.ok, stdout: '1.2.3\n', stderr: '' });
    expect(await captureCli(versioned, ['gone'])).toEqual({
      code: EXIT.badInput,
      stdout: '',
      stderr: 'prazo: "gone" lives elsewhere.\n',
    });
    expect((await captureCli(versioned, ['nope'])).stderr).toBe(
      'prazo: unknown command "nope". Run `tool --help`.\n',
    );
  });

  it('keeps its command table frozen and without a prototype', () => {
    expect(Object.isFrozen(commands)).toBe(true);
    expect(Object.getPrototypeOf(commands)).toBeNull();
  });
});

describe('formatMs: milliseconds as the deadline ledger writes them', () => {
  it('writes the rounded value in groups of three digits, a space apart, then " ms"', () => {
    fc.assert(
      fc.property(fc.double({ min: -1e12, max: 1e12, noNaN: true }), (value) => {
        const text = formatMs(value);
        expect(text).toMatch(/^-?\d{1,3}(?: \d{3})* ms$/);
        expect(Number(text.slice(0, -3).replaceAll(' ', ''))).toBe(Math.round(value) || 0);
      }),
    );
    expect(formatMs(999.5)).toBe('1 000 ms');
  });
});
