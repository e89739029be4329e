import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Counts of what a test server saw, by the kind in the attempt header. */
export interface Seen {
  total: number;
  original: number;
  retry: number;
  hedge: number;
  /** Header values of every request, in arrival order. */
  deadlines: string[];
  attempts: string[];
}

export interface TestServer {
  origin: string;
  seen: Seen;
  close(): Promise<void>;
}

/**
 * A node:http server on port 0 of `host` (127.0.0.1 unless told: other instances listen on
 * 127.0.0.2, 127.0.0.3 …, all loopback) that counts requests and destroys its sockets on close.
 */
export async function startServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void,
  host = '127.0.0.1',
): Promise<TestServer> {
  const seen: Seen = { total: 0, original: 0, retry: 0, hedge: 0, deadlines: [], attempts: [] };
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    seen.total++;
    const attempt = String(req.headers['x-prazo-attempt'] ?? '');
    seen.attempts.push(attempt);
    seen.deadlines.push(String(req.headers['x-deadline-epoch-ms'] ?? ''));
    const kind = /kind=(original|retry|hedge)/.exec(attempt)?.[1] as
      | 'original'
      | 'retry'
      | 'hedge'
      | undefined;
    if (kind) seen[kind]++;
    handler(req, res, seen.total);
  });
  server.keepAliveTimeout = 5_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An origin on `host` (127.0.0.1 unless told) where nothing listens: connecting is refused at once. */
export async function refusedOrigin(host = '127.0.0.1'): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://${host}:${port}`;
}

/** Answers `status` with a small body once the request body is read. */
export function reply(
  res: http.ServerResponse,
  status: number,
  headers: Record<string, string> = {},
  body = 'ok',
) {
  res.writeHead(status, { 'content-type': 'text/plain', ...headers });
  res.end(body);
}

export function elapsedSince(t0: number): number {
  return performance.now() - t0;
}

/**
 * Loads undici's lazy parts (the HTTP parser is compiled on the first connection) so that the
 * first measured call of a test does not pay for them.
 */
export async function warmUp(): Promise<void> {
  const { Pool } = await import('undici');
  const server = await startServer((_req, res) => reply(res, 200));
  const pool = new Pool(server.origin);
  try {
    const { body } = await pool.request({ path: '/', method: 'GET' });
    await body.dump();
  } finally {
    await pool.close();
    await server.close();
  }
}

/** A server in a child process (see child-server.mjs), for tests whose timing matters. */
export interface ChildServer {
  origin: string;
  /** Resolves when the server next receives a request (mode `answer-after` only). */
  nextRequest(): Promise<void>;
  /** Resolves with the wall-clock ms at which the server next wrote an answer (mode `answer-after` only). */
  nextAnswer(): Promise<number>;
  stats(): Promise<{ total: number; original: number; retry: number; hedge: number }>;
  close(): Promise<void>;
}

export async function startChildServer(
  mode: 'fast' | 'slow-every-20th' | 'answer-after',
  sleepMs = 200,
): Promise<ChildServer> {
  const { fork } = await import('node:child_process');
  const child = fork(new URL('./child-server.mjs', import.meta.url), [mode, String(sleepMs)], {
    stdio: 'inherit',
  });
  const port = await new Promise<number>((resolve) =>
    child.once('message', (m: { port: number }) => resolve(m.port)),
  );
  /** The next message from the child that `pick` maps to a value (the others are left alone). */
  const next = <T>(pick: (message: unknown) => T | undefined): Promise<T> =>
    new Promise<T>((resolve) => {
      const onMessage = (message: unknown) => {
        const value = pick(message);
        if (value === undefined) return;
        child.off('message', onMessage);
        resolve(value);
      };
      child.on('message', onMessage);
    });
  type Stats = Awaited<ReturnType<ChildServer['stats']>>;
  return {
    origin: `http://127.0.0.1:${port}`,
    nextRequest: () => next((m) => (m === 'request' ? true : undefined)).then(() => undefined),
    nextAnswer: () => next((m) => (m as { answeredAt?: number } | null)?.answeredAt),
    stats: () => {
      const stats = next((m) => (m as { stats?: Stats } | null)?.stats);
      child.send('stats');
      return stats;
    },
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.send('stop');
      }),
  };
}
