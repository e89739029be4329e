/** Counts of the process's active resources (sockets, servers, timers that keep it alive), by type. */
export function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of process.getActiveResourcesInfo()) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}

/** The resource counts once they stop changing (a baseline before a test opens anything). */
export async function stableResources(): Promise<Record<string, number>> {
  let before = resources();
  for (let i = 0; i < 15; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = resources();
    if (JSON.stringify(now) === JSON.stringify(before)) return now;
    before = now;
  }
  return before;
}

/** The resource counts once they are back to `baseline`, or after about 3 s. */
export async function settleResources(baseline: Record<string, number>): Promise<Record<string, number>> {
  // undici's coarse timer clears itself on its next tick (≤ 1 s) once nothing uses it.
  let now = resources();
  for (let i = 0; i < 30 && JSON.stringify(now) !== JSON.stringify(baseline); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    now = resources();
  }
  return now;
}
