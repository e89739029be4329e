/** A client a CPU-per-call bench drives: one call at a time per worker, closed after its round. */
export interface BenchClient {
  call(): Promise<unknown>;
  close(): Promise<unknown>;
}

/** One configuration of a CPU-per-call bench. */
export interface BenchVariant {
  name: string;
  make(): BenchClient;
}

/**
 * Runs every variant `rounds` times, alternating their order round by round (the second runs first
 * in odd rounds, so that neither always meets a warmer machine), each round `calls` calls with
 * `concurrency` in flight, and returns the process CPU per call (µs, user + system) of each round
 * after the first (a warm-up), by variant name.
 */
export async function cpuPerCallRounds(
  variants: readonly BenchVariant[],
  options: { rounds: number; calls: number; concurrency: number },
): Promise<Map<string, number[]>> {
  const results = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  for (let round = 0; round < options.rounds; round++) {
    for (const v of round % 2 === 0 ? variants : [...variants].reverse()) {
      globalThis.gc?.();
      const client = v.make();
      let next = 0;
      const worker = async () => {
        while (next < options.calls) {
          next++;
          await client.call();
        }
      };
      const cpu0 = process.cpuUsage();
      await Promise.all(Array.from({ length: options.concurrency }, worker));
      const cpu = process.cpuUsage(cpu0);
      await client.close();
      if (round > 0) results.get(v.name)!.push((cpu.user + cpu.system) / options.calls);
    }
  }
  return results;
}
