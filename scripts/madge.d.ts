// The part of madge's API that scripts/check-imports.ts uses (madge ships no types).
declare module 'madge' {
  interface MadgeResult {
    /** Every file (relative to the base folder) and the files it imports. */
    obj(): Record<string, string[]>;
    /** Each import circle, as the files on it. */
    circular(): string[][];
  }
  interface MadgeConfig {
    fileExtensions?: string[];
    tsConfig?: string;
    excludeRegExp?: RegExp[];
  }
  function madge(path: string, config?: MadgeConfig): Promise<MadgeResult>;
  export default madge;
}
