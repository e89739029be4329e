import { describe, expect, it } from 'vitest';
import { cli } from './capture.test-helper.js';

describe('prazo (the lab: the top level)', () => {
  it('lists its commands in its help, and where the library’s are', async () => {
    const { code, stdout } = await cli('--help');
    expect(code).toBe(0);
    for (const command of ['drill', 'simulate', 'double'])
      expect(stdout).toMatch(new RegExp(`^ {2}${command} `, 'm'));
    expect(stdout).toContain('npx prazo --help');
  });

  it.each(['double', 'simulate', 'drill'])(
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
    expect(stderr).toBe('prazo: unknown command "nope". Run `npm run lab -- --help`.\n');
  });

  it.each([
    [['double', '--bogus'], 'double'],
    [['drill', '--bogus'], 'drill'],
  ])('words an unknown option the same way in every command: %j', async (argv, command) => {
    const { code, stdout, stderr } = await cli(...argv);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(`prazo ${command}: unknown option --bogus (see --help)\n`);
  });

  it('simulate names the scenario whose options it looked in', async () => {
    const { code, stderr } = await cli('simulate', 'tail', '--bogus', '1');
    expect(code).toBe(2);
    expect(stderr).toBe('prazo simulate: unknown option --bogus for tail (see --help)\n');
  });
});
