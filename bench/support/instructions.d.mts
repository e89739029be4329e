export declare function haveCallgrind(): boolean;
export declare function segmentMarks(): (word: 'start' | 'end') => Promise<void>;
export declare function countSegments(
  nodeArgs: readonly string[],
  onSegment?: (index: number, instructions: number) => void,
): Promise<{ segments: number[]; report: unknown }>;
