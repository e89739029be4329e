import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import dns2 from 'dns2';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Dependency, dependency } from '../src/client/dependency.js';
import type { MembershipChangedEvent, MembershipErrorEvent } from '../src/engine/events.js';
import { dnsOrigins } from '../src/membership/dns-origins.js';
import { settleResources, stableResources } from './support/resources.js';
import { warmUp } from './support/servers.js';

beforeAll(warmUp);

const HOSTNAME = 'inventory.prazo.test';
const HOSTS = ['127.0.0.2', '127.0.0.3', '127.0.0.4'] as const;
// DNS response codes (RFC 1035 §4.1.1).
const RCODE_SERVFAIL = 2;
const RCODE_NXDOMAIN = 3;

/** node:http servers on several loopback addresses sharing one port (an A record carries none). */
interface Instances {
  port: number;
  /** Requests seen, by host. */
  seen: Record<string, number>;
  /** Requests to /slow held, by host, until released. */
  held: Record<string, number>;
  release(): void;
  close(): Promise<void>;
}

async function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

async function startInstances(): Promise<Instances> {
  const seen: Record<string, number> = {};
  const held: Record<string, number> = {};
  const waiting: Array<() => void> = [];
  const sockets = new Set<Socket>();
  for (let tries = 0; tries < 20; tries++) {
    const servers = HOSTS.map((host) => {
      seen[host] = 0;
      held[host] = 0;
      const server = http.createServer((req, res) => {
        req.resume();
        seen[host]!++;
        const answer = (): void => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(host);
        };
        if (req.url === '/slow') {
          held[host]!++;
          waiting.push(answer);
        } else answer();
      });
      server.on('connection', (socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      });
      return server;
    });
    const closeAll = (): Promise<void> =>
      Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              if (!s.listening) return resolve();
              s.close(() => resolve());
            }),
        ),
      ).then(() => {});
    try {
      const port = await listen(servers[0]!, 0, HOSTS[0]);
      for (let i = 1; i < servers.length; i++) await listen(servers[i]!, port, HOSTS[i]!);
      return {
        port,
        seen,
        held,
        release: () => {
          for (const answer of waiting.splice(0)) answer();
        },
        close: async () => {
          for (const socket of sockets) socket.destroy();
          await closeAll();
        },
      };
    } catch {
      await closeAll(); // the port was taken on another address: try another
    }
  }
  throw new Error('no port free on every loopback address');
}

/** A small authoritative DNS server on 127.0.0.1 answering A records for {@link HOSTNAME}. */
interface DnsServer {
  server: string;
  /** The addresses answered, changed at will. */
  addresses: string[];
  /** Answer SERVFAIL to everything while set. */
  servfail: boolean;
  queries: number;
  close(): Promise<void>;
}

async function startDns(ttlSeconds: number): Promise<DnsServer> {
  const { Packet } = dns2;
  const state: DnsServer = {
    server: '',
    addresses: [],
    servfail: false,
    queries: 0,
    close: async () => {},
  };
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      state.queries++;
      const response = Packet.createResponseFromRequest(request);
      const question = request.questions[0];
      if (state.servfail) response.header.rcode = RCODE_SERVFAIL;
      else if (question?.name !== HOSTNAME) response.header.rcode = RCODE_NXDOMAIN;
      else if (question.type === Packet.TYPE.A)
        for (const address of state.addresses)
          response.answers.push(Packet.createResourceFromQuestion(question, { ttl: ttlSeconds, address }));
      // AAAA: the name exists and has none (NOERROR, no answer).
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  state.server = `127.0.0.1:${addresses.udp!.port}`;
  let closed = false;
  state.close = async () => {
    if (closed) return;
    closed = true;
    await server.close();
  };
  return state;
}

/** Resolves with the next event for which `accept` holds, or rejects after `ms`. */
function next<E>(
  dep: Dependency,
  name: 'membership-changed' | 'membership-error',
  ms: number,
  accept: (event: E) => boolean = () => true,
): Promise<E> {
  return new Promise<E>((resolve, reject) => {
    const listener = (event: unknown): void => {
      if (!accept(event as E)) return;
      clearTimeout(timer);
      dep.off(name, listener);
      resolve(event as E);
    };
    const timer = setTimeout(() => {
      dep.off(name, listener);
      reject(new Error(`no ${name} within ${ms} ms`));
    }, ms);
    dep.on(name, listener);
  });
}

/** Like {@link hostsOf}, `inFlight` calls at a time: the balancer spreads calls in flight. */
async function hostsOfConcurrent(
  dep: Dependency,
  calls: number,
  inFlight: number,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < calls; i += inFlight) {
    const batch = await Promise.all(
      Array.from({ length: inFlight }, async () => (await dep.request({ path: '/' })).body.text()),
    );
    for (const host of batch) counts[host] = (counts[host] ?? 0) + 1;
  }
  return counts;
}

async function hostsOf(dep: Dependency, calls: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < calls; i++) {
    const res = await dep.request({ path: '/' });
    const host = await res.body.text();
    counts[host] = (counts[host] ?? 0) + 1;
  }
  return counts;
}

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe('live membership through a real DNS server', () => {
  it('follows the A records: a removed instance finishes its calls and gets no new one, an added one gets traffic, a failing DNS keeps the last set, and close() leaves nothing open', async () => {
    const baseline = await stableResources();
    const instances = await startInstances();
    cleanup.push(() => instances.close());
    const dnsServer = await startDns(1);
    cleanup.push(() => dnsServer.close());
    dnsServer.addresses = ['127.0.0.2', '127.0.0.3'];
    // TTL 1 s, inside [200 ms, 5 s]: one refresh is one second.
    const REFRESH_MS = 1_000;
    const dep = dependency({
      name: 'inventory',
      origins: dnsOrigins({
        hostname: HOSTNAME,
        port: instances.port,
        servers: [dnsServer.server],
        minRefreshMs: 200,
        maxRefreshMs: 5_000,
        queryTimeoutMs: 300,
      }),
      // Generous: this test is about membership, not timing.
      latency: { p99Ms: 4_000 },
      userDeadlineMs: 20_000,
      attempts: 1,
    });
    let closed = false;
    cleanup.push(async () => {
      if (!closed) await dep.close();
    });
    const errors: MembershipErrorEvent[] = [];
    dep.on('membership-error', (e) => errors.push(e));

    // The first call waits for the first resolution, then both instances answer.
    const first = await hostsOfConcurrent(dep, 40, 4);
    // Only the resolved instances answer (which of them, and how often, is the balancer's choice).
    for (const host of Object.keys(first)) expect(['127.0.0.2', '127.0.0.3']).toContain(host);

    // Calls in flight on both instances, held by the servers.
    // The balancer spreads by latency × calls in flight: keep adding held calls (at most 40) until
    // 127.0.0.2 holds one, however the two instances' latencies compare on a loaded machine.
    const holdOne = () =>
      dep
        .request({ path: '/slow' })
        .then(async (res) => ({ status: res.status, host: await res.body.text() }));
    const slow = Array.from({ length: 4 }, holdOne);
    for (let i = 0; i < 200 && instances.held['127.0.0.2']! + instances.held['127.0.0.3']! < slow.length; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    while (instances.held['127.0.0.2'] === 0 && slow.length < 40) {
      slow.push(holdOne());
      for (
        let i = 0;
        i < 50 && instances.held['127.0.0.2']! + instances.held['127.0.0.3']! < slow.length;
        i++
      )
        await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(instances.held['127.0.0.2']).toBeGreaterThan(0);

    // 127.0.0.2 leaves the DNS answer: gone within one refresh.
    const removedAt = performance.now();
    const removal = next<MembershipChangedEvent>(dep, 'membership-changed', 10_000);
    dnsServer.addresses = ['127.0.0.3'];
    const change = await removal;
    expect(change.removed).toEqual([`http://127.0.0.2:${instances.port}`]);
    // One refresh, plus generous slack for a loaded machine.
    expect(performance.now() - removedAt).toBeLessThan(REFRESH_MS + 2_000);
    const seenBefore = instances.seen['127.0.0.2']!;
    const afterRemoval = await hostsOf(dep, 20);
    expect(afterRemoval).toEqual({ '127.0.0.3': 20 });
    expect(instances.seen['127.0.0.2']).toBe(seenBefore);

    // Its calls in flight complete.
    instances.release();
    const done = await Promise.all(slow);
    expect(done.every((r) => r.status === 200)).toBe(true);
    expect(done.map((r) => r.host)).toContain('127.0.0.2');

    // 127.0.0.4 joins: it receives traffic.
    const addition = next<MembershipChangedEvent>(dep, 'membership-changed', 10_000);
    dnsServer.addresses = ['127.0.0.3', '127.0.0.4'];
    expect((await addition).added).toEqual([`http://127.0.0.4:${instances.port}`]);
    // The added instance starts slow: batches go on (at most 200 calls) until it has answered.
    const afterAddition: Record<string, number> = {};
    for (let i = 0; i < 10 && !afterAddition['127.0.0.4']; i++)
      for (const [host, n] of Object.entries(await hostsOfConcurrent(dep, 20, 4)))
        afterAddition[host] = (afterAddition[host] ?? 0) + n;
    expect(afterAddition['127.0.0.4']).toBeGreaterThan(0);
    expect(afterAddition['127.0.0.2']).toBeUndefined();

    // The last set stays: both origins are still members, and only they answer (which of them
    // answers a given call is the balancer's choice, by latency and calls in flight).
    const expectLastSet = (served: Record<string, number>): void => {
      expect([...dep.origins()].sort()).toEqual([
        `http://127.0.0.3:${instances.port}`,
        `http://127.0.0.4:${instances.port}`,
      ]);
      for (const host of Object.keys(served)) expect(['127.0.0.3', '127.0.0.4']).toContain(host);
      expect(Object.values(served).reduce((a, b) => a + b, 0)).toBe(20);
    };

    // SERVFAIL: the last set stays, and the dependency says so.
    const servfail = next<MembershipErrorEvent>(dep, 'membership-error', 10_000);
    dnsServer.servfail = true;
    const failure = await servfail;
    expect(failure.error.code).toBe('RESOLVER_FAILED');
    expect([...failure.origins].sort()).toEqual([
      `http://127.0.0.3:${instances.port}`,
      `http://127.0.0.4:${instances.port}`,
    ]);
    expectLastSet(await hostsOfConcurrent(dep, 20, 4));

    // The DNS server gone altogether (queries time out): still the last set.
    await dnsServer.close();
    const failuresBefore = errors.length;
    await next<MembershipErrorEvent>(dep, 'membership-error', 15_000, () => errors.length > failuresBefore);
    expectLastSet(await hostsOfConcurrent(dep, 20, 4));

    closed = true;
    await dep.close();
    await instances.close();
    expect(await settleResources(baseline)).toEqual(baseline);
  }, 60_000);
});

describe('live membership through a function', () => {
  it('sends to the origins an async function answers, follows its changes and keeps the set when it rejects', async () => {
    const instances = await startInstances();
    cleanup.push(() => instances.close());
    const origin = (host: string): string => `http://${host}:${instances.port}`;
    let answer: string[] | Error = [origin('127.0.0.2'), origin('127.0.0.3')];
    let asked = 0;
    const dep = dependency({
      name: 'inventory',
      origins: async () => {
        asked++;
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (answer instanceof Error) throw answer;
        return answer;
      },
      originsRefreshMs: 200,
      latency: { p99Ms: 4_000 },
      userDeadlineMs: 20_000,
      attempts: 1,
    });
    cleanup.push(() => dep.close());
    // Only the answered origins serve (which of them serves a call is the balancer's choice).
    for (const host of Object.keys(await hostsOf(dep, 10)))
      expect(['127.0.0.2', '127.0.0.3']).toContain(host);
    expect([...dep.origins()].sort()).toEqual([origin('127.0.0.2'), origin('127.0.0.3')]);

    const change = next<MembershipChangedEvent>(dep, 'membership-changed', 5_000);
    answer = [origin('127.0.0.4')];
    expect(await change).toMatchObject({ added: [origin('127.0.0.4')] });
    expect(await hostsOf(dep, 10)).toEqual({ '127.0.0.4': 10 });

    const failure = next<MembershipErrorEvent>(dep, 'membership-error', 5_000);
    answer = new Error('registry unavailable');
    expect((await failure).error.cause).toBe(answer);
    expect(await hostsOf(dep, 10)).toEqual({ '127.0.0.4': 10 });

    // Closed, it asks no more (its timer is unref'd: only this shows it was released).
    await dep.close();
    const askedAtClose = asked;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(asked).toBe(askedAtClose);
  }, 30_000);
});
