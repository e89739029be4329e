import type {
  AbortLike,
  RequestBody,
  ResponseBody,
  Transport,
  TransportResponse,
} from '../transport/transport.js';

/** One request seen by a {@link FakeTransport}, with the means to answer it. */
export interface FakeExchange {
  instance: number;
  origin: string;
  method: string;
  path: string;
  /** Request headers, lower-case names. */
  headers: Record<string, string>;
  body: RequestBody | undefined;
  timeoutMs: number;
  /** The transport's own timers' bound the request came with (`transportTimeoutMs`). */
  transportTimeoutMs: number;
  signal: AbortLike;
  /** Whether the exchange has been answered, failed or aborted. */
  settled: boolean;
  /** Whether the body of the answer was dumped or read. */
  bodyConsumed: boolean;
  respond(status: number, headers?: Record<string, string>, text?: string): void;
  fail(error: unknown): void;
  /** Says a connection took the request (undici's `onRequestStart`): the end of its connect phase. */
  written(): void;
}

/** A transport that records requests and lets the test answer them by hand, no network. */
export interface FakeTransport extends Transport {
  readonly exchanges: FakeExchange[];
  /** Exchanges not yet settled. */
  pending(): FakeExchange[];
  closed: boolean;
}

/**
 * Creates a {@link FakeTransport}. `onRequest` may answer at once (called synchronously for each
 * request); otherwise the test answers later through `exchanges`. An aborted exchange rejects with
 * the signal's reason, as undici does.
 */
export function createFakeTransport(
  initialOrigins: readonly string[],
  onRequest?: (exchange: FakeExchange) => void,
): FakeTransport {
  const exchanges: FakeExchange[] = [];
  let origins = initialOrigins;
  const transport: FakeTransport = {
    get origins() {
      return origins;
    },
    setOrigins(next) {
      origins = next;
    },
    exchanges,
    closed: false,
    pending: () => exchanges.filter((e) => !e.settled),
    send(request, signal) {
      return new Promise<TransportResponse>((resolve, reject) => {
        const {
          origin,
          method,
          path,
          requestHeaders: headerList,
          requestBody: body,
          timeoutMs,
          transportTimeoutMs,
        } = request;
        const headers: Record<string, string> = {};
        for (let i = 0; i < headerList.length; i += 2)
          headers[headerList[i]!.toLowerCase()] = headerList[i + 1]!;
        const onAbort = (): void => {
          if (exchange.settled) return;
          exchange.settled = true;
          reject(signal.reason);
        };
        const exchange: FakeExchange = {
          instance: origins.indexOf(origin),
          origin,
          method,
          path,
          headers,
          body,
          timeoutMs,
          transportTimeoutMs,
          signal,
          settled: false,
          bodyConsumed: false,
          respond(status, responseHeaders = {}, text = '') {
            if (exchange.settled) return;
            exchange.settled = true;
            signal.removeEventListener('abort', onAbort);
            resolve({ statusCode: status, headers: { ...responseHeaders }, body: fakeBody(text, exchange) });
          },
          written() {
            request.written?.();
          },
          fail(error) {
            if (exchange.settled) return;
            exchange.settled = true;
            signal.removeEventListener('abort', onAbort);
            reject(error);
          },
        };
        exchanges.push(exchange);
        if (signal.aborted) {
          onAbort();
          return;
        }
        signal.addEventListener('abort', onAbort);
        onRequest?.(exchange);
      });
    },
    async close() {
      transport.closed = true;
    },
  };
  return transport;
}

function fakeBody(text: string, exchange: FakeExchange): ResponseBody {
  const bytes = new TextEncoder().encode(text);
  const consume = (): void => {
    exchange.bodyConsumed = true;
  };
  return {
    async text() {
      consume();
      return text;
    },
    async json() {
      consume();
      return JSON.parse(text);
    },
    async bytes() {
      consume();
      return bytes.slice();
    },
    async arrayBuffer() {
      consume();
      return bytes.buffer.slice(0) as ArrayBuffer;
    },
    async dump() {
      consume();
      return null;
    },
    destroy() {
      consume();
    },
    async *[Symbol.asyncIterator]() {
      consume();
      yield bytes;
    },
  };
}
