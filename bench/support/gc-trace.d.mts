export declare function benchDependency(origin: string): {
  name: string;
  origins: string[];
  latency: { p99Ms: number; p95Ms: number };
  userDeadlineMs: number;
  attempts: number;
  connections: number;
  hedge: { at: 'p95' };
};
export declare function isScavenge(line: string): boolean;
export declare function traceField(line: string, name: string): number;
