export declare function benchDependency(origin: string): {
  name: string;
  origins: string[];
  latency: { p99Ms: number; p95Ms: number };
  userDeadlineMs: number;
  attempts: number;
  connections: number;
  hedge: { at: 'p95' };
};
export declare function measuredCalls(
  call: () => Promise<unknown>,
  calls: number,
  concurrency: number,
): Promise<void>;
/** What the scavenges of a traced client process's measured calls came to. */
export interface TracedRun {
  scavenges: number;
  survivedMb: number;
  pauseMs: number;
  cpuUs: number;
}
export declare function runTraced(
  label: string,
  args: readonly string[],
  pinned: boolean,
): Promise<TracedRun>;
export declare function median(values: readonly number[]): number;
export declare function requireBuild(script: string): void;
