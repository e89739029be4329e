export declare function haveCallgrind(): boolean;
export declare function instructionsOf(pid: number): number;
export declare function spawnCounted(
  nodeArgs: readonly string[],
): import('node:child_process').ChildProcessByStdio<
  import('node:stream').Writable,
  import('node:stream').Readable,
  null
>;
export declare function segmentMarks(): (word: 'start' | 'end') => Promise<void>;
export declare function countSegments(
  nodeArgs: readonly string[],
  onSegment?: (index: number, instructions: number) => void,
): Promise<{ segments: number[]; report: unknown }>;
