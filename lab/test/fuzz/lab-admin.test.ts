import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isPrazoError } from 'prazo';
import { describe, it } from 'vitest';
import { headerSlot, RUNS } from '../../../test/fuzz/arbitraries.js';
import {
  type Behaviour,
  parseAttemptHeader,
  parseBehaviour,
  parseBehaviourJson,
  pickOutcome,
} from '../../src/index.js';

/** Behaviour-shaped JSON: the admin endpoint's body and the `--behaviour` flag as a user types them. */
const field = fc.constantFrom(
  'latency',
  'answerAtMs',
  'statuses',
  'hang',
  'resetBeforeHeaders',
  'resetMidBody',
  'slowBodyMs',
  'wireDelayMs',
  'ioWait',
  'bodyBytes',
  'refuse',
  'connectTimeout',
  'type',
  'ms',
  'medianMs',
  'p99Ms',
  'base',
  'tail',
  'tailShare',
  'status',
  'share',
  'retryAfter',
  '__proto__',
  'constructor',
);
const leaf = fc.oneof(
  fc.constantFrom('fixed', 'lognormal', 'mixture', true, false, null, 0, 0.5, 1, 429, 503, -1, 1e308),
  fc.double(),
  fc.integer(),
  fc.string({ maxLength: 8 }),
);
const shaped = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(field, tie('value'), { maxKeys: 5 }),
  ),
})).value;

/** Text: valid JSON of shaped values, truncated or spliced JSON, and arbitrary strings. */
const adminBody = fc.oneof(
  shaped.map((value) => JSON.stringify(value) ?? ''),
  fc.tuple(shaped, fc.nat(), fc.string({ maxLength: 4 })).map(([value, at, junk]) => {
    const text = JSON.stringify(value) ?? '';
    const cut = text.length === 0 ? 0 : at % text.length;
    return text.slice(0, cut) + junk + text.slice(cut);
  }),
  fc.string({ maxLength: 60 }),
  fc.string({ unit: 'binary', maxLength: 60 }),
);

function checkBehaviour(behaviour: Behaviour): void {
  assert.ok(Object.isFrozen(behaviour));
  const total =
    behaviour.hang +
    behaviour.resetBeforeHeaders +
    behaviour.resetMidBody +
    behaviour.statuses.reduce((sum, entry) => sum + entry.share, 0);
  assert.ok(total <= 1 + 1e-9);
  assert.ok(!(behaviour.refuse && behaviour.connectTimeout));
  assert.ok(Object.isFrozen(behaviour.ioWait));
  assert.ok(behaviour.ioWait.share >= 0 && behaviour.ioWait.share <= 1 && behaviour.ioWait.ms >= 0);
  for (const entry of behaviour.statuses) {
    assert.ok(Number.isInteger(entry.status) && entry.status >= 200 && entry.status <= 599);
    // A Retry-After the double sends must be a legal header value: no CR/LF can be smuggled in.
    if (entry.retryAfter !== null) assert.match(entry.retryAfter, /^[\x20-\x7e]*$/);
  }
  assert.ok(pickOutcome(behaviour, 0) !== undefined);
  assert.ok(pickOutcome(behaviour, 0.999_999) !== undefined);
}

describe('fuzz: the double admin commands', () => {
  it('an admin body is either a valid behaviour or an INVALID_INPUT naming the behaviour', () => {
    fc.assert(
      fc.property(adminBody, (text) => {
        let behaviour: Behaviour;
        try {
          behaviour = parseBehaviourJson(text);
        } catch (error) {
          assert.ok(isPrazoError(error, 'INVALID_INPUT'));
          // The JSON parser's message may quote the input (line breaks included): the CLI folds it
          // into one line, the admin endpoint returns it inside a JSON string.
          assert.match((error as Error).message, /^behaviour: /);
          return;
        }
        checkBehaviour(behaviour);
      }),
      { numRuns: RUNS },
    );
  });

  it('a behaviour object built from the known fields never escapes as anything but INVALID_INPUT', () => {
    fc.assert(
      fc.property(fc.dictionary(field, shaped, { maxKeys: 6 }), (input) => {
        let behaviour: Behaviour;
        try {
          behaviour = parseBehaviour(input);
        } catch (error) {
          assert.ok(isPrazoError(error, 'INVALID_INPUT'));
          return;
        }
        checkBehaviour(behaviour);
        assert.deepEqual(parseBehaviour(JSON.parse(JSON.stringify(behaviour))), behaviour);
      }),
      { numRuns: RUNS },
    );
  });

  it('the attempt header parser never throws and answers only sane attempts', () => {
    fc.assert(
      fc.property(headerSlot, (value) => {
        const info = parseAttemptHeader(value);
        if (info === undefined) return;
        assert.ok(Number.isSafeInteger(info.attempt) && info.attempt >= 1);
        assert.ok(['original', 'retry', 'hedge'].includes(info.kind));
      }),
      { numRuns: RUNS },
    );
  });
});
