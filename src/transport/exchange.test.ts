import { describe, expect, it } from 'vitest';
import { createAbortHandle } from '../testing/abort-handle.js';
import { Exchange, type RequestController } from './exchange.js';
import type { ExchangeOutcome, TransportResponse } from './transport.js';

/** undici's controller of one request, doing nothing. */
const controller: RequestController = { abort() {}, pause() {}, resume() {} };

/** An outcome that notes what it is told, and whether while `inside()` says the caller still runs. */
function noting(name: string, seen: string[], inside: () => boolean): ExchangeOutcome {
  const note = (what: string) => seen.push(`${inside() ? 'inside: ' : ''}${name} ${what}`);
  return {
    exchangeAnswered: (response: TransportResponse) => note(`answered ${response.statusCode}`),
    exchangeFailed: (error: unknown) => note(`failed ${(error as Error).message}`),
  };
}

describe('an exchange tells its outcome', () => {
  it('on a later turn than the one it became known in: never inside the dispatch that answered or failed it', async () => {
    const seen: string[] = [];
    let inside = true;
    const answered = new Exchange();
    answered.open(
      createAbortHandle(),
      undefined,
      null,
      noting('a', seen, () => inside),
    );
    answered.onRequestStart(controller, undefined);
    answered.onResponseStart(controller, 200, {}, 'OK');
    const aborted = createAbortHandle();
    aborted.abort(new Error('gone before it was sent'));
    new Exchange().open(
      aborted,
      undefined,
      null,
      noting('b', seen, () => inside),
    );
    const failed = new Exchange();
    failed.open(
      createAbortHandle(),
      undefined,
      null,
      noting('c', seen, () => inside),
    );
    failed.onResponseError(null, new Error('refused'));
    inside = false;
    expect(seen).toEqual([]);
    await Promise.resolve();
    expect(seen).toEqual(['a answered 200', 'b failed gone before it was sent', 'c failed refused']);
  });

  it('once, in the order outcomes became known; one that an outcome makes known is told in the same run', async () => {
    const seen: string[] = [];
    const late = new Exchange();
    const lateSignal = createAbortHandle();
    late.open(
      lateSignal,
      undefined,
      null,
      noting('late', seen, () => false),
    );
    const first = new Exchange();
    first.open(createAbortHandle(), undefined, null, {
      exchangeAnswered() {
        seen.push('first answered');
        // Queued before the exchange it stops is told: told after it.
        Promise.resolve().then(() => seen.push('a microtask queued by the first outcome'));
        lateSignal.abort(new Error('lost to the first'));
      },
      exchangeFailed() {},
    });
    const second = new Exchange();
    second.open(
      createAbortHandle(),
      undefined,
      null,
      noting('second', seen, () => false),
    );
    first.onResponseStart(controller, 200, {}, 'OK');
    second.onResponseStart(controller, 503, {}, 'Unavailable');
    // Neither is told twice, whatever else happens to it.
    first.onResponseError(controller, new Error('after the answer'));
    second.stop(new Error('after the answer'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([
      'first answered',
      'second answered 503',
      'late failed lost to the first',
      'a microtask queued by the first outcome',
    ]);
  });
});
