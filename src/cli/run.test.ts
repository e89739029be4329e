import { describe, expect, it } from 'vitest';
import { cli } from './capture.test-helper.js';

describe('prazo (the top level)', () => {
  it('lists --version and --help in its help', async () => {
    const { code, stdout } = await cli('--help');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ {2}-v, --version +print the version of prazo$/m);
    expect(stdout).toMatch(/^ {2}-h, --help +show this help$/m);
  });

  it('prints its version with --version and -v', async () => {
    for (const flag of ['--version', '-v']) {
      const { code, stdout } = await cli(flag);
      expect(code).toBe(0);
      expect(stdout).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?\n$/);
    }
  });

  it.each(['calibrate', 'pool'])(
    '`prazo help %s` shows that command’s help, as `--help` does',
    async (command) => {
      const viaHelp = await cli('help', command);
      const viaFlag = await cli(command, '--help');
      expect(viaHelp.code).toBe(0);
      expect(viaHelp.stdout).toBe(viaFlag.stdout);
      expect(viaHelp.stdout).toContain(`prazo ${command}`);
      expect(viaHelp.stdout).not.toContain('Commands:');
    },
  );

  it('`prazo help nope` names the unknown command', async () => {
    const { code, stderr } = await cli('help', 'nope');
    expect(code).toBe(2);
    expect(stderr).toBe('prazo: unknown command "nope". Run `prazo --help`.\n');
  });

  it.each([
    [['calibrate', '--p99', '180', '--deadline', '1500', '--bogus'], 'calibrate'],
    [['pool', '--rps', '10', '--bogus'], 'pool'],
  ])('words an unknown option the same way in every command: %j', async (argv, command) => {
    const { code, stdout, stderr } = await cli(...argv);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(`prazo ${command}: unknown option --bogus (see --help)\n`);
  });

  it.each(['drill', 'simulate', 'double'])('names where the lab command %s went', async (command) => {
    const { code, stdout, stderr } = await cli(command, '--quick');
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(`"${command}" is a command of prazo's lab`);
    expect(stderr).toContain(`npm run lab -- ${command}`);
  });
});
