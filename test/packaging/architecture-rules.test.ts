import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cruiser = fileURLToPath(new URL('../../node_modules/dependency-cruiser/bin/dependency-cruiser.mjs', import.meta.url));

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

interface CruiseResult {
  summary: { violations: Violation[]; totalCruised: number };
}

describe('the import table of docs/architecture.md (.dependency-cruiser.cjs)', () => {
  it('holds for every import in src/', async () => {
    // The cruiser exits non-zero on a violation, and the JSON it printed says which; without JSON it failed to run.
    const run = promisify(execFile)(process.execPath, [cruiser, 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], {
      cwd: root,
      maxBuffer: 64 * 1024 * 1024,
    });
    const { stdout } = await run.catch((error: { stdout?: string; stderr?: string }) => {
      if (error.stdout === undefined || error.stdout === '') throw new Error(`dependency-cruiser did not run: ${error.stderr ?? ''}`);
      return { stdout: error.stdout };
    });
    const result = JSON.parse(stdout) as CruiseResult;
    expect(result.summary.totalCruised).toBeGreaterThan(100);
    expect(result.summary.violations.map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`)).toEqual([]);
  }, 120_000);
});
