// Types of stats.mjs, for the TypeScript test that checks it (test/bench-lib/stats.test.ts).
export declare const SCENARIO_NAMES: string[];
export declare const USAGE: string;
export declare class UsageError extends Error {}
export interface BenchArgs {
  quick: boolean;
  only: string[];
  nodes: string[];
  against: string | undefined;
}
export declare function parseArgs(argv: string[], names?: string[]): BenchArgs;
export declare function isNodeLine(spec: string): boolean;
export declare function abbaOrder<T>(items: readonly T[], round: number): T[];
export declare function median(values: readonly number[]): number;
export declare function sig(value: number, digits?: number): number;
export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}
export declare function summary(values: readonly number[]): Summary;
export declare function pairedRatio(a: readonly number[], b: readonly number[]): Summary;
export declare function num(value: number): string;
export declare function figure(values: readonly number[], unit?: string): string;
export declare function ratioText(r: Summary): string;
export declare function notIn(refLabel: string): string;
