import ky, { HTTPError } from 'ky';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Dependency, dependency } from '../src/client/dependency.js';
import { withDeadline } from '../src/deadline/context.js';
import { Deadline } from '../src/deadline/deadline.js';
import { isPrazoError } from '../src/errors.js';
import { reply, startServer, type TestServer, warmUp } from './support/servers.js';

beforeAll(warmUp);

let server: TestServer | undefined;
let dep: Dependency | undefined;
afterEach(async () => {
  await dep?.close();
  await server?.close();
  dep = undefined;
  server = undefined;
});

/** A dependency that always answers 503, and the epoch ms at which each request arrived. */
async function unavailable(): Promise<{ arrivals: number[] }> {
  const arrivals: number[] = [];
  server = await startServer((req, res) => {
    arrivals.push(Date.now());
    req.resume();
    reply(res, 503);
  });
  dep = dependency({
    name: 'inventory',
    origins: [server.origin],
    latency: { p99Ms: 50 },
    userDeadlineMs: 2_000,
    attempts: 2,
  });
  return { arrivals };
}

describe('an SDK that retries, over dep.fetch', () => {
  it('sends at most the attempts prazo budgets for one ky call against a 503, configured as docs/fetch.md says', async () => {
    await unavailable();
    // docs/fetch.md: ky's own retries off, prazo retries; any origin of the dependency as prefix.
    const api = ky.create({ prefixUrl: server!.origin, fetch: dep!.fetch, retry: 0 });
    const error = await withDeadline(Deadline.after(1_500), () => api.get('stock/42').text()).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HTTPError);
    expect((error as HTTPError).response.status).toBe(503);
    expect(server!.seen.total).toBe(2);
    expect(server!.seen.original).toBe(1);
    expect(server!.seen.retry).toBe(1);
  });

  it("holds ky's default retries to the one absolute deadline of the scope", async () => {
    const { arrivals } = await unavailable();
    // ky's defaults: 2 retries after 300 ms and 600 ms, each a new original call to prazo. Inside the
    // scope every one of them gets the same absolute limit; the third try starts after it and sends
    // nothing (DEADLINE_INSUFFICIENT), where alone it would have had 2 s of its own.
    const api = ky.create({ prefixUrl: server!.origin, fetch: dep!.fetch });
    const deadline = Deadline.after(700);
    const error = await withDeadline(deadline, () => api.get('stock/42').text()).catch((e: unknown) => e);
    deadline.dispose();
    expect(server!.seen.total).toBeGreaterThanOrEqual(2);
    expect(server!.seen.total).toBeLessThanOrEqual(4); // ky's defaults alone: 6
    expect(new Set(server!.seen.deadlines)).toEqual(new Set([String(deadline.limitMs)]));
    for (const at of arrivals) expect(at).toBeLessThan(deadline.limitMs);
    // The last try was refused before anything was sent, or (on a slow machine) the deadline already
    // cut the second one: either way a prazo error or ky's last 503, never a 4th round of attempts.
    expect((error instanceof TypeError && isPrazoError(error.cause)) || error instanceof HTTPError).toBe(
      true,
    );
  });
});
