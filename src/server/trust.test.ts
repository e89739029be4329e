import type { IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdmission } from '../admission/admission.js';
import { Deadline } from '../deadline/deadline.js';
import { isPrazoError } from '../errors.js';
import { createFakeClock } from '../testing/fake-clock.js';
import type { Criticality } from '../wire/criticality-header.js';
import { createRequestTrust, type ServerTrust, UNTRUSTED_HEADER_WARNING } from './trust.js';

/** A request as the adapters see it: headers, and where it came from. */
interface Req {
  headers: IncomingHttpHeaders;
  from: string;
}

const claims = (from = '10.0.0.9'): Req => ({
  from,
  headers: { 'x-criticality': 'critical', 'x-deadline-epoch-ms': '1700000000100', 'grpc-timeout': '50m' },
});

/** What the adapter would do with `req`: whether its deadline counts, its criticality, what is left. */
function read(trust: ServerTrust<Req> | undefined, req: Req) {
  const reader = createRequestTrust<Req>(trust);
  return {
    deadline: reader.deadline(req, req.headers),
    criticality: reader.criticality(req, req.headers),
    headers: Object.keys(req.headers).sort(),
  };
}

const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);
process.on('warning', onWarning);
afterEach(() => {
  warnings.length = 0;
});

const flushWarnings = () => new Promise((resolve) => setImmediate(resolve));

describe('createRequestTrust', () => {
  it("'all' takes both claims as sent and leaves the headers alone", () => {
    expect(read('all', claims())).toEqual({
      deadline: true,
      criticality: 'critical',
      headers: ['grpc-timeout', 'x-criticality', 'x-deadline-epoch-ms'],
    });
  });

  it("'none' treats both claims as absent and removes them, so that a handler cannot forward them", () => {
    expect(read('none', claims())).toEqual({ deadline: false, criticality: 'default', headers: [] });
  });

  it('asks a predicate, per request, and fails closed when it throws or answers anything but true', () => {
    const mesh = (req: Req) => req.from.startsWith('10.1.');
    expect(read(mesh, claims('10.1.0.5'))).toMatchObject({ deadline: true, criticality: 'critical' });
    expect(read(mesh, claims('203.0.113.7'))).toEqual({
      deadline: false,
      criticality: 'default',
      headers: [],
    });
    expect(
      read(() => {
        throw new Error('no certificate');
      }, claims()),
    ).toMatchObject({ deadline: false, criticality: 'default' });
    expect(read((() => 'yes') as never, claims())).toMatchObject({ deadline: false, criticality: 'default' });
  });

  it('takes one policy per header; a header left out of the object is not trusted', () => {
    expect(read({ deadline: 'all' }, claims())).toEqual({
      deadline: true,
      criticality: 'default',
      headers: ['grpc-timeout', 'x-deadline-epoch-ms'],
    });
    expect(read({ criticality: 'all', deadline: 'none' }, claims())).toEqual({
      deadline: false,
      criticality: 'critical',
      headers: ['x-criticality'],
    });
  });

  it('rejects an unusable option at setup, naming it', () => {
    for (const [trust, option] of [
      ['some', 'trust'],
      [true, 'trust'],
      [{ deadline: 'yes' }, 'trust.deadline'],
      [{ criticality: 1 }, 'trust.criticality'],
    ] as const) {
      let thrown: unknown;
      try {
        createRequestTrust(trust);
      } catch (error) {
        thrown = error;
      }
      expect(isPrazoError(thrown, 'INVALID_OPTION')).toBe(true);
      expect((thrown as { option: string }).option).toBe(option);
    }
  });

  it('warns once, when trust was left unset, that it ignored a header; never when it was set', async () => {
    const unset = createRequestTrust<Req>(undefined);
    for (let i = 0; i < 3; i++) {
      const req = claims();
      unset.criticality(req, req.headers);
      unset.deadline(req, req.headers);
    }
    const none = createRequestTrust<Req>('none');
    const req = claims();
    none.criticality(req, req.headers);
    none.deadline(req, req.headers);
    await flushWarnings();
    expect(warnings).toHaveLength(1);
    expect((warnings[0] as Error & { code?: string }).code).toBe(UNTRUSTED_HEADER_WARNING);
    expect(warnings[0]!.message).toMatch(/x-criticality.*`trust`/);
  });

  it('reads no header at all when none is sent, and warns about nothing', async () => {
    expect(read(undefined, { from: '', headers: {} })).toEqual({
      deadline: false,
      criticality: 'default',
      headers: [],
    });
    await flushWarnings();
    expect(warnings).toEqual([]);
  });
});

describe('an overloaded service whose untrusted callers claim critical', () => {
  // The scenario: 600 req/s offered to a service with 4 slots and a 20 ms handler (capacity
  // 200 req/s), one request in three claiming `critical`. Two seconds of virtual time.
  const RATE_PER_S = 600;
  const SERVICE_MS = 20;
  const DURATION_MS = 2000;
  const DEFAULT_MS = 1000;

  function offer(trust: ServerTrust<Req>) {
    const clock = createFakeClock(1_700_000_000_000);
    const admission = createAdmission({ maxInFlight: 4, clock });
    const reader = createRequestTrust<Req>(trust);
    const offered = { critical: 0, honest: 0 };
    const served = { critical: 0, honest: 0 };
    const deadlines: Deadline[] = [];
    const intervalMs = 1000 / RATE_PER_S;
    for (let i = 0; i * intervalMs < DURATION_MS; i++) {
      clock.advanceTo(1_700_000_000_000 + Math.round(i * intervalMs));
      const claiming = i % 3 === 0;
      const group = claiming ? 'critical' : 'honest';
      const req: Req = { from: '203.0.113.7', headers: claiming ? { 'x-criticality': 'critical' } : {} };
      const criticality: Criticality = reader.criticality(req, req.headers);
      // An untrusted deadline is absent too: every request gets the local default.
      const deadline = Deadline.after(DEFAULT_MS, clock);
      deadlines.push(deadline);
      offered[group]++;
      admission.offer(
        'GET /work',
        deadline,
        criticality,
        (ticket) => {
          served[group]++;
          clock.setTimeout(() => ticket.release(true), SERVICE_MS);
        },
        () => {},
      );
    }
    clock.advance(DEFAULT_MS + SERVICE_MS);
    for (const deadline of deadlines) deadline.dispose();
    expect(clock.pendingTimers()).toBe(0);
    return { critical: served.critical / offered.critical, honest: served.honest / offered.honest, served };
  }

  it('serves both groups in proportion to what they offered when their criticality is not trusted', () => {
    const share = offer('none');
    // Capacity is about a third of what is offered: each group gets about a third of its requests.
    expect(share.served.critical + share.served.honest).toBeGreaterThan(
      0.25 * (DURATION_MS / 1000) * RATE_PER_S,
    );
    expect(
      Math.abs(share.critical - share.honest) / Math.max(share.critical, share.honest),
    ).toBeLessThanOrEqual(0.1);
  });

  it('lets the claim win when it is trusted — what an edge must not allow', () => {
    const share = offer('all');
    expect(share.critical).toBeGreaterThan(2 * share.honest);
  });
});
