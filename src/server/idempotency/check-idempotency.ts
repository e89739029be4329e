import { InvalidOptionError } from '../../errors.js';
import type { Idempotency } from './idempotency.js';

/**
 * Checks an `idempotency` option at setup: undefined, or what `createIdempotency()` returns.
 * @throws {@link InvalidOptionError}
 */
export function checkIdempotency(idempotency: unknown): Idempotency | undefined {
  if (idempotency === undefined) return undefined;
  if (
    typeof idempotency !== 'object' ||
    idempotency === null ||
    typeof (idempotency as Idempotency).handle !== 'function'
  )
    throw new InvalidOptionError('idempotency', 'the result of createIdempotency()', idempotency);
  return idempotency as Idempotency;
}
