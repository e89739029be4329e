import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startDouble } from '../src/double.js';

// The double with finite capacity (`workers`), over real HTTP: requests wait in its FIFO queue, and a
// request whose caller has gone still holds a worker for its whole service time.

describe('double with workers', () => {
  it('serves one request per worker at a time, in arrival order, and keeps serving callers who left', async () => {
    await using double = await startDouble({ workers: 1, behaviour: { answerAtMs: 60 } });
    const startedAt = performance.now();
    const finished: number[] = [];
    const send = (signal?: AbortSignal) =>
      request(`${double.url}/stock`, signal ? { signal } : {}).then(
        async (res) => {
          await res.body.text();
          finished.push(performance.now() - startedAt);
        },
        () => {},
      );
    // The second caller gives up while its request waits; the worker serves it all the same.
    const gone = new AbortController();
    const calls = [send(), send(gone.signal), send(), send()];
    setTimeout(() => gone.abort(), 30);
    await Promise.all(calls);
    // Three answered, the last after four service times (the abandoned one took its turn): ≥ 240 ms.
    expect(finished).toHaveLength(3);
    expect(Math.max(...finished)).toBeGreaterThanOrEqual(235);
    const queue = double.queue();
    expect(queue).toMatchObject({ workers: 1, busy: 0, waiting: 0, servedForNobody: 1 });
    expect(queue!.peakWaiting).toBeGreaterThanOrEqual(2);
    expect(double.stats().received).toBe(4);
  });

  it('answers a request waiting on I/O later without holding its worker', async () => {
    // One worker, 40 ms of service, every request waiting 400 ms on I/O after it: the worker serves
    // the next request while the first one waits, so four answers take ≈ 4 × 40 + 400 ms, not 4 × 440.
    await using double = await startDouble({
      workers: 1,
      behaviour: { answerAtMs: 40, ioWait: { share: 1, ms: 400 } },
    });
    const startedAt = performance.now();
    const took = await Promise.all(
      [1, 2, 3, 4].map(async () => {
        const res = await request(`${double.url}/stock`);
        await res.body.text();
        return performance.now() - startedAt;
      }),
    );
    expect(Math.min(...took)).toBeGreaterThanOrEqual(435);
    // Generous for a loaded machine, and far below the 1 760 ms of waits that held the worker.
    expect(Math.max(...took)).toBeLessThan(1_200);
    expect(double.queue()).toMatchObject({ workers: 1, busy: 0, waiting: 0 });
  });

  it('has no queue without workers', async () => {
    await using double = await startDouble();
    expect(double.queue()).toBeNull();
  });
});
