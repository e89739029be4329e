import type { DependencyResponse, RequestHeaders, RequestOptions } from '../engine/call.js';
import type { ResponseBody } from '../engine/response.js';
import { ForeignOriginError, InvalidOptionError, isPrazoError } from '../errors.js';
import type { BodySink } from '../transport/incoming-body.js';
import type { RequestBody } from '../transport/transport.js';

/** Statuses whose response has no body by definition (a `Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** A function with the shape of the global `fetch`. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Where `dependency.fetch()` may send a call, and where the rest goes. */
export interface FetchRoute {
  /** The dependency's name (in errors). */
  name: string;
  /** The dependency's origins, normalised (`URL.origin`). */
  origins: readonly string[];
  /** Receives, untouched, the calls whose absolute URL has another origin; refused when absent. */
  passThrough: FetchFunction | undefined;
}

/**
 * The Fetch API over a dependency: `input` is a path on the dependency, or an absolute URL (or a
 * `Request`) on **one of its origins** — prazo keeps its path and query and picks the instance. An
 * absolute URL on any other origin is never rerouted: it rejects with `FOREIGN_ORIGIN`, or goes,
 * untouched, to `route.passThrough` when one is configured. `init` is a standard `RequestInit`
 * (`redirect` other than `'manual'` is refused: prazo returns redirects as they are). Resolves with a
 * standard `Response`. The deadline comes from the ambient context (`withDeadline`) or
 * `userDeadlineMs`; `init.signal` cancels the call.
 *
 * Rejections follow the Fetch API: the caller's abort rejects with the signal's `reason` (a
 * `DOMException` named `AbortError` by default); any other failure rejects with a `TypeError` whose
 * `cause` is the prazo error (its `code`, `attempts` and history intact), as undici's `fetch` does
 * with its own errors. See {@link fetchError}.
 */
export function fetchThrough(
  dep: { request(options: RequestOptions): Promise<DependencyResponse> },
  input: string | URL | Request,
  init: RequestInit | undefined,
  route: FetchRoute,
): Promise<Response> {
  return fetchCall(dep, input, init, route).catch((error: unknown) => {
    throw fetchError(error, callerSignal(input, init));
  });
}

/**
 * The error a Fetch API caller expects for a prazo failure: the signal's reason when the caller
 * aborted, a `TypeError('fetch failed', { cause })` for any other prazo error; anything else as it is.
 */
export function fetchError(error: unknown, signal: AbortSignal | null | undefined): unknown {
  if (!isPrazoError(error)) return error;
  if (error.code === 'CANCELLED' && signal?.aborted === true) return signal.reason;
  return new TypeError('fetch failed', { cause: error });
}

function callerSignal(input: unknown, init: RequestInit | undefined): AbortSignal | null | undefined {
  if (typeof init === 'object' && init !== null && init.signal != null) return init.signal;
  return typeof Request !== 'undefined' && input instanceof Request ? input.signal : undefined;
}

async function fetchCall(...[dep, input, init, route]: Parameters<typeof fetchThrough>): Promise<Response> {
  const url = absoluteUrl(input);
  if (url !== undefined && !route.origins.includes(url.origin)) {
    if (route.passThrough !== undefined) return route.passThrough(input, init);
    throw new ForeignOriginError(route.name, url.origin);
  }
  if (init == null) init = {};
  else if (typeof init !== 'object') throw new InvalidOptionError('init', 'a RequestInit object', init);
  if (init.redirect !== undefined && init.redirect !== 'manual')
    throw new InvalidOptionError(
      'init.redirect',
      "'manual' or absent (prazo returns redirects as they are, it never follows them)",
      init.redirect,
    );
  let path: string;
  let method = init.method;
  let headersInit: HeadersLike | undefined = init.headers;
  let bodyInit: BodyLike | null | undefined = init.body;
  let signal = init.signal ?? undefined;
  if (url === undefined) {
    path = input as string;
  } else if (typeof input === 'string' || input instanceof URL) {
    path = pathOf(url);
  } else {
    path = pathOf(url);
    method ??= input.method;
    headersInit ??= input.headers;
    if (bodyInit === undefined && input.body !== null) bodyInit = await input.arrayBuffer();
    signal ??= input.signal;
  }
  const headers: RequestHeaders = {};
  if (headersInit !== undefined) {
    let list: Headers;
    try {
      list = new Headers(headersInit);
    } catch {
      throw new InvalidOptionError(
        'init.headers',
        'a Headers, a record or a list of name/value pairs',
        headersInit,
      );
    }
    for (const [name, value] of list) headers[name] = value;
  }
  const body = bodyInit == null ? undefined : await toBody(bodyInit, headers);
  const options: RequestOptions = { path, headers };
  if (method !== undefined) options.method = method;
  if (body !== undefined) options.body = body;
  if (signal) options.signal = signal;
  const response = await dep.request(options);
  const responseHeaders = new Headers();
  for (const name of Object.keys(response.headers)) {
    const value = response.headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) responseHeaders.append(name, v);
    else responseHeaders.append(name, value);
  }
  const noBody = NULL_BODY_STATUSES.has(response.status) || (method ?? 'GET').toUpperCase() === 'HEAD';
  if (noBody) response.body.dump().catch(() => {});
  return new Response(noBody ? null : webStream(response.body), {
    status: response.status,
    statusText: reasonPhrase((response.body as { statusMessage?: string }).statusMessage),
    headers: responseHeaders,
  });
}

/**
 * The reason phrase as `Response` takes it (tab, space, visible ASCII and bytes 0x80–0xFF): the
 * status line's own, or '' when the transport had none or it holds anything else — `new Response()`
 * throws on such a phrase, and a dependency's status line must not fail a call that it answered.
 * @internal
 */
export function reasonPhrase(text: string | undefined): string {
  return text !== undefined && REASON_PHRASE.test(text) ? text : '';
}

const REASON_PHRASE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** A response body prazo's transport feeds chunk by chunk (`IncomingBody`). */
interface PipeableBody {
  pipe(sink: BodySink): void;
  unpause(): void;
  destroy(error?: Error): unknown;
}

/**
 * The body as a web `ReadableStream`, fed from the transport's chunks (copied): the connection
 * pauses while the stream's queue is full and resumes when the reader pulls. (Handing `Response` the
 * body's async iterator instead costs a Node stream, an async generator and a byte stream per call,
 * about twice the time.)
 */
function webStream(body: ResponseBody): ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> {
  const pipeable = body as unknown as Partial<PipeableBody>;
  if (typeof pipeable.pipe !== 'function') return body;
  const source = pipeable as PipeableBody;
  let open = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      source.pipe({
        data(chunk) {
          if (!open) return false;
          // A copy: the chunk is a view of the connection's read buffer, and a web stream's reader
          // may transfer (detach) the ArrayBuffer of what it is handed.
          controller.enqueue(new Uint8Array(chunk));
          return (controller.desiredSize ?? 0) > 0;
        },
        end() {
          if (!open) return;
          open = false;
          controller.close();
        },
        error(error) {
          if (!open) return;
          open = false;
          controller.error(error);
        },
      });
    },
    pull() {
      if (open) source.unpause();
    },
    cancel(reason) {
      open = false;
      source.destroy(reason instanceof Error ? reason : undefined);
    },
  });
}

type HeadersLike = ConstructorParameters<typeof Headers>[0];
type BodyLike = NonNullable<RequestInit['body']>;

function pathOf(url: URL): string {
  return url.pathname + url.search;
}

/** The URL `input` names, or undefined for a path (`/…`) on the dependency. */
function absoluteUrl(input: unknown): URL | undefined {
  if (typeof input === 'string') {
    // "//host/x" (and "/\\host/x", which URL parsers read the same way) names another host, not a path.
    const second = input.charCodeAt(1);
    if (input.charCodeAt(0) === 47 /* / */ && second !== 47 && second !== 92 /* \\ */) return undefined;
    if (URL.canParse(input)) return new URL(input);
  } else if (input instanceof URL) {
    return input;
  } else if (typeof Request !== 'undefined' && input instanceof Request) {
    return new URL(input.url);
  }
  throw new InvalidOptionError(
    'input',
    'a path starting with "/", an absolute http(s) URL on one of the origins, a URL or a Request',
    input,
  );
}

/** Strings and bytes stay replayable; a ReadableStream is sent once; other bodies are serialised. */
async function toBody(body: BodyLike, headers: RequestHeaders): Promise<RequestBody> {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream)
    return body as unknown as AsyncIterable<Uint8Array>;
  if (!(body instanceof URLSearchParams || body instanceof Blob || body instanceof FormData))
    throw new InvalidOptionError(
      'init.body',
      'a string, bytes, a ReadableStream, URLSearchParams, Blob or FormData (serialise objects first, e.g. JSON.stringify)',
      body,
    );
  // URLSearchParams, Blob, FormData: let the platform serialise them (and pick the content type).
  const request = new Request('http://prazo.invalid/', { method: 'POST', body });
  const type = request.headers.get('content-type');
  if (type !== null && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type'))
    headers['content-type'] = type;
  return new Uint8Array(await request.arrayBuffer());
}
