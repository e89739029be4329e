import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.js';
import { OTHER_ROUTE, RouteServiceTimes } from './route-service-time.js';

function table(overrides: Partial<ConstructorParameters<typeof RouteServiceTimes>[0]> = {}) {
  const clock = createFakeClock(1_000_000);
  const routes = new RouteServiceTimes({
    percentile: 50,
    minSamples: 5,
    refreshMs: 1000,
    maxRoutes: 2,
    windowMs: 30_000,
    clock,
    ...overrides,
  });
  return { clock, routes };
}

describe('RouteServiceTimes', () => {
  it('expects nothing until a route has enough samples, then its median', () => {
    const { clock, routes } = table();
    const route = routes.route('GET /a');
    for (const ms of [10, 20, 30, 40]) route.record(ms);
    route.refreshIfDue(clock.now(), routes);
    expect(route.expectedMs).toBeUndefined();
    route.record(50);
    clock.advance(1000);
    route.refreshIfDue(clock.now(), routes);
    expect(route.expectedMs).toBeCloseTo(30, 0);
  });

  it('reads the window at most once per refresh period', () => {
    const { clock, routes } = table({ minSamples: 1 });
    const route = routes.route('GET /a');
    route.record(10);
    route.refreshIfDue(clock.now(), routes);
    for (let i = 0; i < 10; i++) route.record(500);
    route.refreshIfDue(clock.now() + 999, routes);
    expect(route.expectedMs).toBeCloseTo(10, 0);
    route.refreshIfDue(clock.now() + 1000, routes);
    expect(route.expectedMs).toBeCloseTo(500, -1);
  });

  it('forgets service times older than the window, so a route refused for long is admitted again', () => {
    const { clock, routes } = table();
    const route = routes.route('GET /a');
    for (let i = 0; i < 10; i++) route.record(300);
    route.refreshIfDue(clock.now(), routes);
    expect(route.expectedMs).toBeCloseTo(300, -1);
    clock.advance(31_000);
    route.refreshIfDue(clock.now(), routes);
    expect(route.expectedMs).toBeUndefined();
  });

  it('keeps each route apart and folds routes beyond the limit into one', () => {
    const { routes } = table();
    const a = routes.route('GET /a');
    const b = routes.route('GET /b');
    expect(routes.route('GET /a')).toBe(a);
    expect(b).not.toBe(a);
    const c = routes.route('GET /c');
    expect(c.key).toBe(OTHER_ROUTE);
    expect(routes.route('GET /d')).toBe(c);
    expect([...routes.routes()].map((r) => r.key)).toEqual(['GET /a', 'GET /b', OTHER_ROUTE]);
  });

  it('counts admissions and refusals by criticality', () => {
    const { routes } = table();
    const route = routes.route('GET /a');
    route.countAdmitted('critical');
    route.countRefused('shed', 'sheddable');
    route.countRefused('shed', 'sheddable');
    expect([...route.admitted]).toEqual([1, 0, 0]);
    expect(route.refused.reduce((a, b) => a + b, 0)).toBe(2);
  });
});
