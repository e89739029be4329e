import { describe, expect, it } from 'vitest';
import { createSimulation } from './engine.js';
import { createSimRandom } from './random.js';
import { createServerModel, type JobStatus, type ServerModelOptions } from './server-model.js';

const base: ServerModelOptions = {
  servers: 2,
  serviceMeanMs: 10,
  serviceSigma: 0,
  queueLimit: 2,
  rejectMs: 1,
  cancelAbandoned: false,
};

function setup(options: Partial<ServerModelOptions> = {}) {
  const sim = createSimulation();
  const server = createServerModel(sim, createSimRandom(1), { ...base, ...options });
  const answers: Array<{ status: JobStatus; latencyMs: number; at: number }> = [];
  const submit = () =>
    server.submit((status, latencyMs) => answers.push({ status, latencyMs, at: sim.now() }));
  return { sim, server, answers, submit };
}

describe('createServerModel', () => {
  it('queues what the workers cannot take, so latency grows with the queue, and refuses beyond the limit with 503', () => {
    const { sim, server, answers, submit } = setup();
    for (let i = 0; i < 5; i++) submit();
    expect(server.busy()).toBe(2);
    expect(server.queueLength()).toBe(2);
    sim.run(1_000);
    expect(answers.map((a) => [a.status, a.latencyMs])).toEqual([
      [503, 1],
      [200, 10],
      [200, 10],
      [200, 20],
      [200, 20],
    ]);
    expect(server.stats).toEqual({ arrived: 5, rejected: 1, served: 4, servedAbandoned: 0, dropped: 0 });
  });

  it('keeps serving requests the client abandoned: capacity spent for nobody', () => {
    const { sim, server, submit } = setup();
    const jobs = [submit(), submit(), submit()];
    for (const job of jobs) server.abandon(job);
    sim.run(1_000);
    expect(server.stats.served).toBe(3);
    expect(server.stats.servedAbandoned).toBe(3);
  });

  it('drops abandoned requests still in the queue when cancellation is on', () => {
    const { sim, server, answers, submit } = setup({ cancelAbandoned: true });
    submit();
    submit();
    const queued = submit();
    server.abandon(queued);
    sim.run(1_000);
    expect(answers).toHaveLength(2);
    expect(server.stats).toMatchObject({ arrived: 3, served: 2, dropped: 1 });
  });

  it('serves with fewer workers after a capacity drop and fails a share of requests during an error burst', () => {
    const { sim, server, answers, submit } = setup({ servers: 4, queueLimit: 100 });
    server.setCapacityFactor(0.5);
    server.setErrorRate(1);
    for (let i = 0; i < 4; i++) submit();
    expect(server.busy()).toBe(2);
    sim.run(1_000);
    expect(answers.map((a) => a.status)).toEqual([500, 500, 500, 500]);
    expect(Math.max(...answers.map((a) => a.latencyMs))).toBe(20);
  });

  it('accounts for every request: arrived = rejected + served + dropped + still inside', () => {
    const { sim, server, submit } = setup({
      servers: 3,
      queueLimit: 5,
      serviceSigma: 0.5,
      cancelAbandoned: true,
    });
    const random = createSimRandom(3);
    for (let t = 0; t < 500; t += 1) {
      sim.at(t, () => {
        const job = submit();
        if (random.next() < 0.3) server.abandon(job);
      });
    }
    sim.run(300);
    const s = server.stats;
    expect(s.arrived).toBe(s.rejected + s.served + s.dropped + server.inSystem());
  });
});
