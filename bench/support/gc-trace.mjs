// What the benchmarks that trace their client processes share, in plain JavaScript so that a client
// process without a TypeScript loader (bench/lean-client.mjs) can import it too.

/** prazo with every feature on, as in the client benchmark: the options of one dependency. */
export function benchDependency(origin) {
  return {
    name: 'bench',
    origins: [origin],
    latency: { p99Ms: 200, p95Ms: 50 },
    userDeadlineMs: 2_000,
    attempts: 2,
    connections: 64,
    hedge: { at: 'p95' },
  };
}

/** Whether a `--trace-gc-nvp` line is a scavenge (Node ≤ 24's `gc=s`, Node 26's JSON `"gc":"s"`). */
export function isScavenge(line) {
  return line.includes(' gc=s ') || line.includes('"gc":"s"');
}

/** A figure of a trace line: `name=1.5` (Node ≤ 24) or `"name":1.5` (Node 26's JSON lines). */
export function traceField(line, name) {
  const match = new RegExp(`(?:^|\\s)${name}=([0-9.]+)|"${name}":([0-9.]+)`).exec(line);
  return match === null ? 0 : Number(match[1] ?? match[2]);
}
