import { InvalidOptionError } from '../errors.js';
import type { DependencyResponse, RequestHeaders, RequestOptions } from './call.js';
import type { RequestBody } from './transport.js';

/** Statuses whose response has no body by definition (a `Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * The Fetch API over a dependency: `input` names a path on the dependency (an absolute URL keeps
 * only its path and query — the instance is prazo's choice), `init` is a standard `RequestInit`.
 * Resolves with a standard `Response`. The deadline comes from the ambient context (`withDeadline`)
 * or `userDeadlineMs`; `init.signal` cancels the call. Failures reject with prazo errors (with
 * `code`), not `TypeError`.
 */
export async function fetchThrough(
  dep: { request(options: RequestOptions): Promise<DependencyResponse> },
  input: string | URL | Request,
  init: RequestInit = {},
): Promise<Response> {
  let path: string;
  let method = init.method;
  let headersInit: HeadersLike | undefined = init.headers;
  let bodyInit: BodyLike | null | undefined = init.body;
  let signal = init.signal ?? undefined;
  if (typeof input === 'string') {
    path = input.startsWith('/') ? input : pathOf(new URL(input));
  } else if (input instanceof URL) {
    path = pathOf(input);
  } else if (typeof Request !== 'undefined' && input instanceof Request) {
    path = pathOf(new URL(input.url));
    method ??= input.method;
    headersInit ??= input.headers;
    if (bodyInit === undefined && input.body !== null) bodyInit = await input.arrayBuffer();
    signal ??= input.signal;
  } else {
    throw new InvalidOptionError('input', 'a path, a URL or a Request', input);
  }
  const headers: RequestHeaders = {};
  if (headersInit !== undefined) {
    for (const [name, value] of new Headers(headersInit)) headers[name] = value;
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
  return new Response(noBody ? null : (response.body as unknown as ReadableStream<Uint8Array>), {
    status: response.status,
    headers: responseHeaders,
  });
}

type HeadersLike = ConstructorParameters<typeof Headers>[0];
type BodyLike = NonNullable<RequestInit['body']>;

function pathOf(url: URL): string {
  return url.pathname + url.search;
}

/** Strings and bytes stay replayable; a ReadableStream is sent once; other bodies are serialised. */
async function toBody(body: BodyLike, headers: RequestHeaders): Promise<RequestBody> {
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream)
    return body as unknown as AsyncIterable<Uint8Array>;
  // URLSearchParams, Blob, FormData: let the platform serialise them (and pick the content type).
  const request = new Request('http://prazo.invalid/', { method: 'POST', body });
  const type = request.headers.get('content-type');
  if (type !== null && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type'))
    headers['content-type'] = type;
  return new Uint8Array(await request.arrayBuffer());
}
