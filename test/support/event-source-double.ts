import type { Clock } from '../../src/clock.js';
import { createSlicedWindow, type SlicedWindow } from '../../src/latency/sliced-window.js';
import type {
  BudgetSnapshot,
  DependencyEventMap,
  DependencyEventName,
  PolicySnapshot,
  PolicyUpdate,
  RecalibratableDependency,
} from '../../src/observe/source.js';

/**
 * A test double of a dependency's event source: it has the members the observability adapters read
 * (`name`, `on`/`off`, `budget()`, `policy()`, `window()`, `setPolicy()`) and emits whatever events the
 * test tells it to, with no HTTP behind it. The real-dependency tests live in `test/`.
 */
export interface EventSourceDouble extends RecalibratableDependency {
  emit<E extends DependencyEventName>(event: E, payload: Omit<DependencyEventMap[E], 'dependency'>): void;
  /** Emits the events of one whole logical request with the given attempts. */
  request(spec: {
    outcome?: 'success' | 'failure';
    durationMs: number;
    attempts?: Array<{
      kind: 'original' | 'retry' | 'hedge';
      durationMs: number;
      outcome?: 'success' | 'failure' | 'aborted';
      timeout?: 'connect' | 'read';
      won?: boolean;
    }>;
  }): void;
  setBudget(budget: BudgetSnapshot): void;
  listenerCount(): number;
  readonly window: () => SlicedWindow;
  readonly policies: PolicyUpdate[];
}

export function createEventSourceDouble(
  name: string,
  options: { clock?: Clock; policy?: Partial<PolicySnapshot> } = {},
): EventSourceDouble {
  const listeners = new Map<string, Set<(payload: never) => void>>();
  let budget: BudgetSnapshot = { originals: 0, extras: 0, ratio: 0 };
  let policy: PolicySnapshot = {
    connectMs: 252,
    readMs: 252,
    attempts: 2,
    warning: null,
    p95Ms: 120,
    p99Ms: 180,
    ...options.policy,
  };
  const window = createSlicedWindow(options.clock ? { clock: options.clock } : {});
  const policies: PolicyUpdate[] = [];
  let requestId = 0;

  const double: EventSourceDouble = {
    name,
    on(event, listener) {
      let set = listeners.get(event);
      if (!set) {
        set = new Set();
        listeners.set(event, set);
      }
      set.add(listener as (payload: never) => void);
    },
    off(event, listener) {
      listeners.get(event)?.delete(listener as (payload: never) => void);
    },
    emit(event, payload) {
      for (const l of listeners.get(event) ?? [])
        (l as (p: unknown) => void)({ dependency: name, ...payload });
    },
    request(spec) {
      const id = ++requestId;
      const attempts = spec.attempts ?? [{ kind: 'original', durationMs: spec.durationMs }];
      double.emit('request-start', { requestId: id, method: 'GET', idempotent: true, remainingMs: 1000 });
      attempts.forEach((a, i) => {
        double.emit('attempt-start', {
          requestId: id,
          attempt: i + 1,
          kind: a.kind,
          instance: 'http://127.0.0.1:1',
        });
        const end: Omit<DependencyEventMap['attempt-end'], 'dependency'> = {
          requestId: id,
          attempt: i + 1,
          kind: a.kind,
          instance: 'http://127.0.0.1:1',
          durationMs: a.durationMs,
          outcome: a.outcome ?? (a.timeout ? 'failure' : 'success'),
          won: a.won ?? false,
        };
        if (a.timeout) end.timeout = a.timeout;
        double.emit('attempt-end', end);
      });
      double.emit('request-end', {
        requestId: id,
        outcome: spec.outcome ?? 'success',
        durationMs: spec.durationMs,
        attempts: attempts.length,
      });
    },
    budget: () => budget,
    policy: () => policy,
    window: () => window,
    setPolicy(next) {
      policies.push(next);
      policy = { ...policy, ...next };
    },
    setBudget(next) {
      budget = next;
    },
    listenerCount: () => [...listeners.values()].reduce((n, s) => n + s.size, 0),
    policies,
  };
  return double;
}
