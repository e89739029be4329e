import { currentDeadline } from '../../deadline/context.js';
import { effectiveLimitMs } from '../../deadline/effective-limit.js';
import { currentHopTally, type HopTally } from '../../deadline/hop-tally.js';
import type { HopTiming } from '../../wire/server-timing.js';
import type { Call } from '../call.js';
import { type DependencyContext, Epilogue, type Handler, type Outcome, type Step } from '../pipeline.js';

/**
 * Fixes the call's absolute limit: the earlier of the explicit `deadline` and the ambient one
 * (`withDeadline`, a server adapter) — deadlines only tighten — or now + `userDeadlineMs` when there
 * is neither; then capped at now + `localMaxMs` (a caller may ask for less time, never make this
 * service hold the dependency longer). The limit travels, unchanged, in `x-deadline-epoch-ms` on
 * every attempt.
 *
 * Inside a request handled by a prazo server adapter, the call also reports to the request's hop
 * tally (`deadline/hop-tally.ts`): how long the handler waited on this dependency, and the
 * `Server-Timing` the dependency answered with, which the adapter passes up in its own.
 *
 * @throws {@link InvalidOptionError} when the explicit `deadline.limitMs` is not a finite number.
 * @see The source article, "prazo absoluto propagado".
 */
export function deadlineStep(ctx: DependencyContext): Step {
  // Calls that start in the same millisecond share a limit: format its header value once.
  let lastLimit = Number.NaN;
  let lastHeader = '';
  return (next) => (call, now, out) => {
    const limit = effectiveLimitMs(
      call.explicitLimitMs,
      currentDeadline()?.limitMs,
      now + ctx.userDeadlineMs,
      now + ctx.localMaxMs,
    );
    const ledger = call.ledger;
    ledger.dependency = ctx.name;
    ledger.onIgnored = ctx.serverTimingIgnored;
    if (limit !== lastLimit) {
      lastLimit = limit;
      lastHeader = String(Math.floor(limit));
    }
    // `begin` keeps the start and the limit on the call's ledger, their one home.
    call.begin(now, limit, lastHeader);
    const hop = currentHopTally();
    if (hop === undefined) next(call, now, out);
    else reported(ctx, hop, call, next, now, out);
  };
}

/** What the dependency's last answer to `call` said of itself (`Server-Timing`), or null. */
function said(call: Call): HopTiming | null {
  const ledger = call.ledger;
  const last = ledger.lastAnswered();
  return last === null ? null : (ledger.readingOf(last)?.hop ?? null);
}

/** Runs the call inside a served request, reporting it to the request's tally when it ends. */
function reported(
  ctx: DependencyContext,
  hop: HopTally,
  call: Call,
  next: Handler,
  now: number,
  out: Outcome,
): void {
  hop.begin(ctx.name, now);
  try {
    next(call, now, new HopReport(ctx, hop, call, out));
  } catch (error) {
    hop.end(ctx.name, ctx.clock.now(), null);
    throw error;
  }
}

/** The outcome of a call inside a served request: its end is reported to the request's tally first. */
class HopReport extends Epilogue {
  readonly #ctx: DependencyContext;
  readonly #hop: HopTally;
  readonly #call: Call;

  constructor(ctx: DependencyContext, hop: HopTally, call: Call, out: Outcome) {
    super(out);
    this.#ctx = ctx;
    this.#hop = hop;
    this.#call = call;
  }

  protected ended(): void {
    this.#hop.end(this.#ctx.name, this.#ctx.clock.now(), said(this.#call));
  }
}
