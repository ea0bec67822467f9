/** Types of scripts/test-tiers.mjs, for the tests that hold the suite to its tiers (test/architecture/tiers.test.ts). */
export declare const SYSTEM_BUILTINS: readonly string[];
export declare const SYSTEM_PACKAGES: readonly string[];
export declare function runtimeImports(text: string, fileName?: string): { specs: string[]; fetches: boolean };
export declare class Tiers {
  readonly root: string;
  constructor(root: string);
  testFiles(): string[];
  why(test: string): string[] | null;
  tierOf(test: string): 'fast' | 'system';
  list(tier: 'fast' | 'system'): string[];
}
