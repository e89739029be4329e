import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { deadlineErrorHandler, deadlineMiddleware } from '../src/server/express.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** Mounts prazo's error handler, then one that records whatever error still reaches it, and listens. */
async function start(app: express.Express, errors: unknown[]): Promise<string> {
  app.use(deadlineErrorHandler());
  app.use((error: unknown, _req: express.Request, _res: express.Response, next: express.NextFunction) => {
    errors.push(error);
    next(error);
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('prazo/express: a late write after the 504', () => {
  it('drops a handler’s res.json after prazo answered 504 quietly (no ERR_HTTP_HEADERS_SENT) and counts it', async () => {
    const errors: unknown[] = [];
    const lateRequests: string[] = [];
    const middleware = deadlineMiddleware({
      defaultMs: 60,
      maxMs: 5_000,
      onLateWrite: (req) => lateRequests.push(req.url ?? ''),
    });
    let handlerDone!: () => void;
    const finished = new Promise<void>((resolve) => {
      handlerDone = resolve;
    });
    const app = express();
    app.use(middleware);
    app.get('/slow', async (_req, res) => {
      await sleep(250); // well past the 60 ms deadline
      try {
        res.status(200).json({ late: true });
      } finally {
        handlerDone();
      }
    });
    const url = await start(app, errors);

    const res = await request(`${url}/slow`);
    expect(res.statusCode).toBe(504);
    expect(await res.body.json()).toMatchObject({ error: { code: 'DEADLINE_EXCEEDED' } });
    await finished;
    await sleep(20);
    expect(errors).toEqual([]);
    expect(middleware.lateWrites).toBe(1);
    expect(lateRequests).toEqual(['/slow']);
  });

  it('leaves a deadline error thrown after prazo’s 504 to nobody: it is dropped, not logged as an unhandled error', async () => {
    const errors: unknown[] = [];
    const app = express();
    app.use(deadlineMiddleware({ defaultMs: 60, maxMs: 5_000 }));
    let thrown!: () => void;
    const done = new Promise<void>((resolve) => {
      thrown = resolve;
    });
    app.get('/slow', async (req) => {
      await new Promise((resolve) => req.deadline.signal.addEventListener('abort', resolve));
      setImmediate(thrown);
      throw req.deadline.signal.reason;
    });
    const url = await start(app, errors);
    const res = await request(`${url}/slow`);
    expect(res.statusCode).toBe(504);
    await res.body.dump();
    await done;
    await sleep(20);
    expect(errors).toEqual([]);
  });
});
