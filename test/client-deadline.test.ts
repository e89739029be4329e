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

describe('deadlines', () => {
  it('sends nothing when the healthy p99 is above the remaining deadline', async () => {
    server = await startServer((_req, res) => reply(res, 200));
    dep = dependency({
      name: 'supplier',
      origins: [server.origin],
      latency: { p99Ms: 250 },
      userDeadlineMs: 2_000,
    });
    const error = await withDeadline(Deadline.after(100), () => dep!.request({ path: '/quote' })).catch(
      (e: unknown) => e,
    );
    expect(isPrazoError(error, 'DEADLINE_INSUFFICIENT')).toBe(true);
    expect(error).toMatchObject({ requiredMs: 250 });
    expect(server.seen.total).toBe(0);
  });

  it("sends the caller's absolute limit in the deadline header, explicit or ambient", async () => {
    server = await startServer((_req, res) => reply(res, 200));
    dep = dependency({
      name: 'inventory',
      origins: [server.origin],
      latency: { p99Ms: 100 },
      userDeadlineMs: 2_000,
    });
    const explicit = Deadline.at(Date.now() + 1_900);
    await (await dep.request({ path: '/a', deadline: explicit })).body.dump();
    const ambient = Deadline.at(Date.now() + 1_500);
    await withDeadline(ambient, async () => (await dep!.fetch('/b')).text());
    expect(server.seen.deadlines).toEqual([String(explicit.limitMs), String(ambient.limitMs)]);
  });
});
