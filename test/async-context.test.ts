import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { dependency } from '../src/index.js';

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

describe('the async context of what follows an attempt', () => {
  it("is the caller's, not the connection's: events and retries of concurrent calls each see their own", async () => {
    // Every first request of a call is answered 503, the retry 200: each call makes two attempts.
    const seen = new Set<string>();
    server = createServer((req, res) => {
      const path = req.url ?? '';
      res.writeHead(seen.has(path) || path === '/warm' ? 200 : 503);
      seen.add(path);
      res.end('ok');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dep = dependency({
      name: 'context',
      origins: [origin],
      latency: { p99Ms: 200 },
      userDeadlineMs: 3_000,
      attempts: 2,
      retryBudget: { minPerSecond: 100 },
    });
    const storage = new AsyncLocalStorage<string>();
    const notes: string[] = [];
    const note = (what: string, path: string) =>
      notes.push(`${storage.getStore() ?? 'none'} ${what} ${path}`);
    const pathOf = new Map<number, string>();
    dep.on('attempt-headers', (e) => {
      pathOf.set(e.requestId, e.path);
      note(`headers ${e.attempt}`, e.path);
    });
    dep.on('attempt-end', (e) => note(`end ${e.attempt}`, pathOf.get(e.requestId) ?? '?'));
    dep.on('request-end', (e) => note('request-end', pathOf.get(e.requestId) ?? '?'));
    try {
      // The connection the calls then share is opened outside any caller's context.
      await (await dep.request({ path: '/warm' })).body.text();
      notes.length = 0;
      const answers = await Promise.all(
        ['a', 'b'].map((caller) =>
          storage.run(caller, async () => {
            const response = await dep.request({ path: `/${caller}` });
            await response.body.text();
            return response.status;
          }),
        ),
      );
      expect(answers).toEqual([200, 200]);
      const expected = ['a', 'b'].flatMap((caller) => [
        `${caller} headers 1 /${caller}`,
        `${caller} end 1 /${caller}`,
        `${caller} headers 2 /${caller}`,
        `${caller} end 2 /${caller}`,
        `${caller} request-end /${caller}`,
      ]);
      expect(notes.sort()).toEqual(expected.sort());
    } finally {
      await dep.close();
    }
  });
});
