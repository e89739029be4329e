import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RequestOptions } from '../engine/call.js';
import { isPrazoError } from '../errors.js';
import { type FetchRoute, fetchThrough, reasonPhrase } from './fetch.js';

const OWN = 'http://10.0.0.1:8080';
const route: FetchRoute = {
  name: 'inventory',
  origins: [OWN, 'https://api.example'],
  passThrough: undefined,
};

/** A dependency stub that records what reached it and stops there. */
function recordingDependency() {
  const reached: RequestOptions[] = [];
  const dep = {
    request(options: RequestOptions): Promise<never> {
      reached.push(options);
      return Promise.reject(new Error('reached the dependency'));
    },
  };
  return { dep, reached };
}

const isOwnPath = (input: string) => input.startsWith('/') && input[1] !== '/' && input[1] !== '\\';
const ownOrigin = (input: string) => URL.canParse(input) && route.origins.includes(new URL(input).origin);

describe('fetchThrough', () => {
  it('sends to the dependency only paths and URLs on its own origins, and refuses the rest with a typed error (property)', async () => {
    const piece = fc.constantFrom(
      'http://',
      'https://',
      '10.0.0.1',
      ':8080',
      ':80',
      'api.example',
      'evil.example',
      '@',
      '/',
      '//',
      '\\',
      '?q=1',
      '#f',
      '%2F',
      ' ',
      'HTTP://',
      'x',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(piece, fc.string({ maxLength: 3 })), { maxLength: 8 }),
        async (pieces) => {
          const input = pieces.join('');
          const { dep, reached } = recordingDependency();
          const error = await fetchThrough(dep, input, undefined, route).then(
            () => undefined,
            (e: unknown) => (e instanceof TypeError && isPrazoError(e.cause) ? e.cause : e),
          );
          if (reached.length > 0) {
            expect(isOwnPath(input) || ownOrigin(input), input).toBe(true);
            expect((error as Error).message).toBe('reached the dependency');
          } else {
            expect(
              isPrazoError(error, 'INVALID_OPTION') || isPrazoError(error, 'FOREIGN_ORIGIN'),
              input,
            ).toBe(true);
            if (ownOrigin(input)) throw new Error(`refused a URL on its own origin: ${input}`);
          }
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('keeps the path and query of a URL on one of its origins, and refuses the lookalikes', async () => {
    const { dep, reached } = recordingDependency();
    // A rejection is a TypeError whose cause is the prazo error, as the Fetch API has it.
    const reject = (input: string) =>
      fetchThrough(dep, input, undefined, route).catch((e: unknown) =>
        e instanceof TypeError ? e.cause : new Error('not a TypeError'),
      );
    await reject('HTTP://10.0.0.1:8080/a?b=1#frag');
    await reject('https://api.example:443/v1/x');
    expect(reached.map((o) => o.path)).toEqual(['/a?b=1', '/v1/x']);
    for (const lookalike of [
      'http://10.0.0.1:8080@evil.example/a',
      'http://10.0.0.1:8081/a',
      'https://10.0.0.1:8080/a',
      'http://api.example/v1',
    ])
      expect(isPrazoError(await reject(lookalike), 'FOREIGN_ORIGIN'), lookalike).toBe(true);
    expect(isPrazoError(await reject('/\\evil.example/a'), 'INVALID_OPTION')).toBe(true);
    expect(reached).toHaveLength(2);
  });
});

describe('reasonPhrase', () => {
  it("keeps a status line's reason phrase that Response takes, and gives '' for any other", () => {
    expect(reasonPhrase('Fine By Me')).toBe('Fine By Me');
    expect(reasonPhrase('N\u00e3o encontrado')).toBe('N\u00e3o encontrado');
    expect(reasonPhrase(undefined)).toBe('');
    expect(reasonPhrase('a\u0001b')).toBe('');
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
        const kept = reasonPhrase(text);
        expect(kept === text || kept === '').toBe(true);
        // Never a phrase Response refuses, and every phrase it takes is kept.
        let accepted = true;
        try {
          new Response(null, { status: 200, statusText: text });
        } catch {
          accepted = false;
        }
        expect(kept).toBe(accepted ? text : '');
        expect(() => new Response(null, { status: 200, statusText: kept })).not.toThrow();
      }),
    );
  });
});
