import type { ServerResponse } from 'node:http';
import type { Admission, Refusal } from '../admission/admission.js';
import type { Deadline } from '../deadline/deadline.js';
import { InvalidOptionError, type PrazoErrorCode } from '../errors.js';
import type { Criticality } from '../wire/criticality-header.js';
import { handlerStarted } from './deadline-scope.js';

/** Route key of the requests an adapter cannot tell apart (no route, no `routeKey`). */
export const ANY_ROUTE = '*';

/**
 * Checks an `admission` option at setup: undefined, or what `createAdmission()` returns.
 * @throws {@link InvalidOptionError}
 */
export function checkAdmission(admission: unknown): Admission | undefined {
  if (admission === undefined) return undefined;
  if (
    typeof admission !== 'object' ||
    admission === null ||
    typeof (admission as Admission).offer !== 'function' ||
    typeof (admission as Admission).countExpired !== 'function'
  )
    throw new InvalidOptionError('admission', 'the result of createAdmission()', admission);
  return admission as Admission;
}

/**
 * Checks a `routeKey` option at setup and returns a reader that never throws: a key function that
 * throws or returns a non-string puts the request under {@link ANY_ROUTE}.
 * @throws {@link InvalidOptionError}
 */
export function checkRouteKey<R>(routeKey: unknown): ((req: R) => string) | undefined {
  if (routeKey === undefined) return undefined;
  if (typeof routeKey !== 'function') throw new InvalidOptionError('routeKey', 'a function', routeKey);
  const read = routeKey as (req: R) => unknown;
  return (req) => {
    try {
      const key = read(req);
      return typeof key === 'string' && key !== '' ? key : ANY_ROUTE;
    } catch {
      return ANY_ROUTE;
    }
  };
}

const CODES: Readonly<Record<Refusal['reason'], PrazoErrorCode>> = {
  expired: 'DEADLINE_EXCEEDED',
  insufficient: 'DEADLINE_INSUFFICIENT',
  'queue-expired': 'DEADLINE_EXCEEDED',
  'queue-full': 'SERVER_OVERLOADED',
  shed: 'SERVER_OVERLOADED',
  'queue-delay': 'SERVER_OVERLOADED',
};

function message(r: Refusal): string {
  switch (r.reason) {
    case 'expired':
      return 'The request arrived after its deadline.';
    case 'insufficient':
      return `Deadline too short for route ${r.route}: ${Math.max(0, Math.floor(r.remainingMs))} ms left, its expected service time is ${Math.ceil(r.expectedMs ?? 0)} ms.`;
    case 'queue-expired':
      return 'The deadline passed while the request waited for a slot.';
    case 'queue-full':
      return 'The server is at its in-flight limit and its queue is full.';
    case 'shed':
      return `The server is overloaded and sheds ${r.criticality} requests first.`;
    case 'queue-delay':
      return `The server is overloaded: the request waited ${Math.round(r.queuedMs)} ms for a slot.`;
  }
}

/**
 * The JSON body of a refusal: `{ error: { code, message, reason, route, remainingMs, requiredMs?,
 * retryAfterSeconds? } }`. `code` is `DEADLINE_INSUFFICIENT` / `DEADLINE_EXCEEDED` for a 504 and
 * `SERVER_OVERLOADED` for a 503.
 */
export function refusalBody(r: Refusal): { error: Record<string, unknown> } {
  const error: Record<string, unknown> = {
    code: CODES[r.reason],
    message: message(r),
    reason: r.reason,
    route: r.route,
    remainingMs: Math.round(r.remainingMs),
  };
  if (r.reason === 'insufficient' && r.expectedMs !== undefined) error.requiredMs = Math.ceil(r.expectedMs);
  if (r.retryAfterSeconds !== undefined) error.retryAfterSeconds = r.retryAfterSeconds;
  return { error };
}

/** The headers of a refusal besides the body's: `Retry-After` on a 503. */
export function refusalHeaders(r: Refusal): Record<string, string> {
  return r.retryAfterSeconds === undefined ? {} : { 'retry-after': String(r.retryAfterSeconds) };
}

/** Writes a refusal on a raw Node response (nothing when something was already sent). */
export function sendRefusal(res: ServerResponse, r: Refusal): void {
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  const payload = JSON.stringify(refusalBody(r));
  res.writeHead(r.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    ...refusalHeaders(r),
  });
  res.end(payload);
}

/**
 * Offers a request to `admission`: `run` goes on when admitted (its slot is freed when the response
 * closes), a refusal is answered on `res` by `answer`.
 * @internal Shared by the adapters.
 */
export function offerRequest(
  admission: Admission,
  route: string,
  deadline: Deadline,
  res: ServerResponse,
  criticality: Criticality,
  run: () => void,
  answer: (refusal: Refusal) => void,
): void {
  admission.offer(
    route,
    deadline,
    criticality,
    (ticket) => {
      res.once('close', () => ticket.release(res.writableFinished));
      handlerStarted(res);
      run();
    },
    answer,
  );
}
