import type { AmplificationResult } from './scenarios/amplification.js';
import type { InstancesResult } from './scenarios/instances.js';
import type { OverloadResult } from './scenarios/overload.js';
import type { TailResult } from './scenarios/tail.js';

/** The result of any scenario. */
export type SimulationResult = AmplificationResult | TailResult | InstancesResult | OverloadResult;

/**
 * The result as JSON. It holds no wall-clock figure, so the same seed and options give the same
 * text, byte for byte.
 */
export function formatSimulationJson(result: SimulationResult): string {
  return `${JSON.stringify(result, null, 2)}\n`;
}

/** The result as a table for a terminal. */
export function formatSimulationTable(result: SimulationResult): string {
  if (result.scenario === 'amplification') return formatAmplification(result);
  if (result.scenario === 'overload') return formatOverload(result);
  return result.scenario === 'tail' ? formatTail(result) : formatInstances(result);
}

const x = (v: number) => `${v.toFixed(2)}×`;
const pct = (v: number, digits = 1) => `${(v * 100).toFixed(digits)} %`;
const ms = (v: number) => (v >= 100 ? `${Math.round(v)} ms` : `${v.toFixed(1)} ms`);
const s = (msValue: number) => `${+(msValue / 1000).toFixed(1)} s`;

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '─'.repeat(w))), ...rows.map(line)].join('\n');
}

function formatAmplification(r: AmplificationResult): string {
  const o = r.options;
  const d = r.dependency;
  const triggerEnd = o.triggerStartMs + o.triggerDurationMs;
  const trigger = [
    o.triggerCapacityFactor < 1 ? `capacity × ${o.triggerCapacityFactor}` : '',
    o.triggerErrorRate > 0 ? `${pct(o.triggerErrorRate, 0)} of responses fail with 500` : '',
  ]
    .filter(Boolean)
    .join(', ');
  const head = [
    `prazo simulate amplification — seed ${o.seed}, ${s(o.durationMs)} at ${o.rps} rps, user deadline ${o.userDeadlineMs} ms`,
    `dependency: ${o.servers} workers × ${o.serviceMeanMs} ms mean = ${Math.round(d.capacityRps)} rps (${pct(d.utilisation, 0)} utilised), queue ${o.queueLimit}, healthy p50 ${ms(d.healthyP50Ms)} / p99 ${ms(d.healthyP99Ms)}`,
    `trigger: ${s(o.triggerStartMs)}–${s(triggerEnd)}${trigger ? `, ${trigger}` : ' (none)'}; abandoned requests ${o.cancelAbandoned ? 'are dropped from the queue' : 'still occupy the workers'}`,
    '',
  ];
  const rows = r.strategies.map((st) => [
    st.name,
    `${st.settings.attemptTimeoutMs} ms`,
    String(st.settings.attempts),
    x(st.load.trigger),
    x(st.load.after),
    x(st.load.overall),
    pct(st.userSuccess.trigger),
    pct(st.userSuccess.after),
    String(Math.round(st.goodputRps.overall)),
    st.recovery.recovered
      ? `yes, ${s(st.recovery.afterTriggerEndMs ?? 0)} after`
      : `NO — metastable (${s(o.durationMs - triggerEnd)} later)`,
  ]);
  const body = table(
    [
      'strategy',
      'timeout',
      'attempts',
      'load·trigger',
      'load·after',
      'load·all',
      'success·trigger',
      'success·after',
      'goodput rps',
      'recovered',
    ],
    rows,
  );
  const notes = [
    '',
    'load = attempts reaching the dependency ÷ user requests; success = user requests answered within the deadline.',
    `recovered = dependency p99 ≤ ${o.healthLatencyFactor} × healthy p99 and ≥ ${pct(o.healthMinSuccess, 0)} success for ${s(o.sustainMs)} in a row after the trigger.`,
    'Published reference (Google SRE book, "Handling Overload"): 3 attempts per request can mean ~3× load;',
    'a 10 % retry budget ≈ 1.1×.',
  ];
  if (d.calibratedOn !== 'healthy-slices')
    notes.push(
      `warning: no healthy second in the warm-up; prazo calibrated on ${d.calibratedOn === 'all-slices' ? 'every latency seen' : 'the mean service time'} (a timeout from a degraded window protects nothing).`,
    );
  for (const st of r.strategies)
    if (st.settings.calibrationWarning) notes.push(`${st.name}: ${st.settings.calibrationWarning}`);
  return `${[...head, body, ...notes].join('\n')}\n`;
}

function formatTail(r: TailResult): string {
  const o = r.options;
  const p = r.paper;
  const head = [
    `prazo simulate tail — seed ${o.seed}, ${s(o.durationMs)} (first ${s(o.warmupMs)} not counted), ${o.fanoutsPerSecond} fan-outs/s × ${o.fanout} sub-requests over ${o.servers} servers`,
    `servers: ${o.serviceMeanMs} ms mean service; pauses of ${o.pauseMeanMs} ms mean every ${s(o.pauseEveryMs)} per server (${pct(r.pausedShare, 3)} of the time); timers tick every ${o.timerResolutionMs} ms`,
    '',
  ];
  const rows = r.strategies.map((st) => [
    st.label,
    ms(st.fanoutMs.p50),
    ms(st.fanoutMs.p99),
    ms(st.fanoutMs.p999),
    pct(st.extraLoad, 2),
    st.name === 'none' ? '—' : x(st.p999Cut),
  ]);
  const body = table(
    ['policy (simulated)', 'fan-out p50', 'p99', 'p99.9', 'extra requests', 'p99.9 cut'],
    rows,
  );
  const paper = [
    '',
    `The paper's figures (${p.source}) — published, not simulated:`,
    table(
      ['policy (paper)', 'p99.9', 'extra requests'],
      [
        ['no hedging', `${p.p999WithoutHedgingMs} ms`, pct(0, 0)],
        ['hedge after 10 ms', `${p.p999WithHedgingMs} ms`, pct(p.extraRequests, 0)],
        ['hedge at the p95', '—', `≈ ${pct(p.deferToP95ExtraLoad, 0)}`],
      ],
    ),
    `(${p.case})`,
  ];
  return `${[...head, body, ...paper].join('\n')}\n`;
}

function formatInstances(r: InstancesResult): string {
  const o = r.options;
  const healthy = o.instances - o.sick - o.slow - o.refusing;
  const head = [
    `prazo simulate instances — seed ${o.seed}, ${s(o.durationMs)} at ${o.rps} rps, ${o.attempts} attempts of at most ${o.attemptTimeoutMs} ms`,
    `${o.instances} instances (${o.workers} workers × ${o.serviceMeanMs} ms mean each): ${o.sick} sick (503 to ${pct(o.sickErrorRate, 0)} of calls), ${o.slow} slow (+${o.slowExtraMs} ms), ${o.refusing} refusing connections, ${healthy} healthy`,
    '',
  ];
  const rows = r.strategies.map((st) => [
    st.label,
    pct(st.success, 2),
    x(st.load),
    ms(st.latencyMs.p50),
    ms(st.latencyMs.p99),
    pct(st.shareByKind.sick, 2),
    pct(st.shareByKind.slow, 2),
    pct(st.shareByKind.refusing, 2),
    `${pct(st.healthyMaxShare)} / ${healthy > 0 ? pct(1 / healthy) : '—'}`,
    String(st.ejections),
  ]);
  const body = table(
    [
      'client',
      'success',
      'load',
      'p50',
      'p99',
      'to sick',
      'to slow',
      'to refusing',
      'healthy: max / 1÷healthy',
      'ejections',
    ],
    rows,
  );
  const notes = [
    '',
    'success = user requests answered 200; load = attempts ÷ user requests; to sick / slow / refusing = share of all attempts',
    'those instances received together; healthy max = the largest share one healthy instance received, next to the share',
    'each would get if the healthy ones took every attempt (1 ÷ healthy instances).',
  ];
  if (o.instances <= 12) {
    notes.push('', 'Share of attempts per instance:');
    for (const st of r.strategies)
      notes.push(
        `  ${st.name.padEnd(6)} ${st.perInstance.map((p, i) => `#${i} ${p.kind} ${pct(p.share)}`).join(' · ')}`,
      );
  }
  return `${[...head, body, ...notes].join('\n')}\n`;
}

function formatOverload(r: OverloadResult): string {
  const o = r.options;
  const sup = r.supplier;
  const head = [
    `prazo simulate overload — seed ${o.seed}, ${s(o.durationMs)} (first ${s(o.warmupMs)} not counted), ${o.factor}× capacity offered open loop by ${o.clients} clients`,
    `supplier: ${o.instances} instances × ${o.workers} workers × ${o.serviceMs} ms = ${Math.round(sup.capacityRps)} rps capacity; offered ${Math.round(sup.offeredRps)} rps; users wait ${o.userDeadlineMs} ms; healthy p99 ${ms(sup.healthyP99Ms)}`,
    '',
  ];
  const rows = r.configs.map((c) => [
    c.label,
    `${Math.round(c.goodputRps)} rps`,
    pct(c.goodputShare),
    pct(c.successShare),
    ms(c.admittedLatencyMs.p50),
    ms(c.admittedLatencyMs.p99),
    c.userLatencyMs.p99 > 0 ? ms(c.userLatencyMs.p99) : '—',
    x(c.amplification),
    c.supplier.served > 0 ? pct(c.supplier.servedForNobody / c.supplier.served) : '—',
    `${c.supplier.refused503} / ${c.supplier.refused504}`,
    `${c.clientRefused.concurrency} / ${c.clientRefused.throttle}`,
  ]);
  const body = table(
    [
      'configuration',
      'goodput',
      'of capacity',
      'success',
      'admitted p50',
      'p99',
      'user p99',
      'amplification',
      'work for nobody',
      'refused 503 / 504',
      'client refused: limit / throttle',
    ],
    rows,
  );
  const notes = [
    '',
    "goodput = requests answered within the user's deadline per second; success = those ÷ requests offered; admitted p50/p99 =",
    "the supplier's time from receiving a request to answering it, for the requests it ran; amplification = attempts the",
    'supplier received ÷ requests offered; work for nobody = share of the requests it ran whose caller had stopped waiting;',
    'user p99 = what users waited for the answers in time, waits in the client and retries included.',
  ];
  return `${[...head, body, ...notes].join('\n')}\n`;
}
