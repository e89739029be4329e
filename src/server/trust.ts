import type { IncomingHttpHeaders } from 'node:http';
import { InvalidOptionError } from '../errors.js';
import { CRITICALITY_HEADER, type Criticality, parseCriticality } from '../wire/criticality-header.js';
import { DEADLINE_HEADER, GRPC_TIMEOUT_HEADER } from '../wire/deadline-header.js';

/**
 * Whose claims a server accepts: `'all'` (every caller is inside the trust boundary), `'none'` (an
 * edge: no caller is), or a predicate on the request that returns `true` for a caller inside it (a
 * peer certificate, a source network, a signed header). A predicate that throws or returns anything
 * but `true` means "not trusted".
 */
export type TrustPolicy<R> = 'all' | 'none' | ((req: R) => boolean);

/** {@link TrustPolicy} per header: whose deadline and whose criticality a server accepts. */
export interface TrustByHeader<R> {
  /** Whose `x-deadline-epoch-ms` and `grpc-timeout` count. @default 'none' */
  deadline?: TrustPolicy<R>;
  /** Whose `x-criticality` counts. @default 'none' */
  criticality?: TrustPolicy<R>;
}

/**
 * The `trust` option of the server adapters: one {@link TrustPolicy} for both headers, or one per
 * header. What is not trusted is treated as absent: the local default deadline (`defaultMs`),
 * criticality `default`, and the header is removed from `req.headers` so that a handler forwarding
 * its headers does not carry the claim past the boundary.
 */
export type ServerTrust<R> = TrustPolicy<R> | TrustByHeader<R>;

/** Code of the warning emitted once when an adapter without `trust` ignores a caller's header. */
export const UNTRUSTED_HEADER_WARNING = 'PRAZO_UNTRUSTED_HEADER';

/** How an adapter reads the claims of one request. @internal */
export interface RequestTrust<R> {
  /**
   * True when the request's deadline headers count. When they do not, they are removed from
   * `headers`.
   */
  deadline(req: R, headers: IncomingHttpHeaders): boolean;
  /** The request's criticality: its header when trusted, `default` (and the header removed) otherwise. */
  criticality(req: R, headers: IncomingHttpHeaders): Criticality;
}

type Judge<R> = 'all' | 'none' | ((req: R) => boolean);

/**
 * Validates a `trust` option once, at setup, and returns the per-request reader.
 * @throws {@link InvalidOptionError} naming `trust` (or `trust.deadline`, `trust.criticality`).
 * @internal Shared by the adapters.
 */
export function createRequestTrust<R>(trust: unknown): RequestTrust<R> {
  const configured = trust !== undefined;
  let deadline: Judge<R>;
  let criticality: Judge<R>;
  if (typeof trust === 'object' && trust !== null) {
    const byHeader = trust as TrustByHeader<R>;
    deadline = judge<R>(byHeader.deadline, 'trust.deadline');
    criticality = judge<R>(byHeader.criticality, 'trust.criticality');
  } else {
    deadline = criticality = judge<R>(trust, 'trust');
  }
  // Unconfigured, an ignored claim is worth one warning: a service behind an edge that relied on
  // the headers being honoured learns what to set instead of losing propagation silently.
  let warned = configured;
  const warn = (header: string): void => {
    if (warned) return;
    warned = true;
    process.emitWarning(
      `prazo ignored the ${header} header of a request: the server adapters honour a caller's deadline and criticality only with the \`trust\` option ('all' behind an edge that removes these headers, a function of the request, or 'none' at the edge to keep ignoring them). See SECURITY.md.`,
      { code: UNTRUSTED_HEADER_WARNING },
    );
  };
  return {
    deadline(req, headers) {
      if (deadline === 'all' || (deadline !== 'none' && deadline(req))) return true;
      if (headers[DEADLINE_HEADER] !== undefined) {
        delete headers[DEADLINE_HEADER];
        warn(DEADLINE_HEADER);
      }
      if (headers[GRPC_TIMEOUT_HEADER] !== undefined) {
        delete headers[GRPC_TIMEOUT_HEADER];
        warn(GRPC_TIMEOUT_HEADER);
      }
      return false;
    },
    criticality(req, headers) {
      const value = headers[CRITICALITY_HEADER];
      if (value === undefined) return 'default';
      if (criticality === 'all' || (criticality !== 'none' && criticality(req)))
        return parseCriticality(value);
      delete headers[CRITICALITY_HEADER];
      warn(CRITICALITY_HEADER);
      return 'default';
    },
  };
}

function judge<R>(policy: unknown, option: string): Judge<R> {
  if (policy === undefined || policy === 'none') return 'none';
  if (policy === 'all') return 'all';
  if (typeof policy !== 'function')
    throw new InvalidOptionError(option, "'all', 'none' or a function (req) => boolean", policy);
  const predicate = policy as (req: R) => unknown;
  return (req) => {
    try {
      return predicate(req) === true;
    } catch {
      return false;
    }
  };
}
