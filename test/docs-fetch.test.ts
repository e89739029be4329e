import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

describe('docs/fetch.md', () => {
  // The first screen: what a reader sees before scrolling.
  const firstScreen = read('docs/fetch.md').split('\n').slice(0, 40).join('\n');

  it('states the origin rule on its first screen', () => {
    expect(firstScreen).toMatch(/never rerouted/);
    expect(firstScreen).toContain('FOREIGN_ORIGIN');
    expect(firstScreen).toContain('passThroughFetch');
  });

  it('states the error contract on its first screen', () => {
    expect(firstScreen).toMatch(/PrazoError/);
    expect(firstScreen).toMatch(/TypeError/);
    expect(firstScreen).toMatch(/AbortError/);
    expect(firstScreen).toMatch(/error\.cause\.code/);
  });

  it("states the SDK-retry rule on its first screen, with each SDK's setting and a deadline scope", () => {
    for (const setting of ['retry: 0', 'retry: { limit: 0 }', 'maxRetries: 0', 'maxAttempts: 1'])
      expect(firstScreen).toContain(setting);
    expect(firstScreen).toContain('withDeadline');
  });

  it('is linked from the README, which gives the same retry rule', () => {
    const readme = read('README.md');
    expect(readme).toContain('docs/fetch.md');
    for (const setting of ['retry: 0', 'retry: { limit: 0 }', 'maxRetries: 0', 'maxAttempts: 1'])
      expect(readme).toContain(setting);
  });
});
