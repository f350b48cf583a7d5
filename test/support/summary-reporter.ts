import type { Reporter, TestModule, TestRunEndReason } from 'vitest/node';

export interface SummaryCounts {
  passed: number;
  failed: number;
  skipped: number;
}

/**
 * The counts the closing line reports. A test file that failed to load (an import that throws, a
 * syntax error) has no tests to count, so it counts as one failed; so does each error raised
 * outside any test. A run that failed for a reason none of these name still says `failed` ≥ 1: the
 * line never disagrees with the exit code.
 */
export function summarise(testModules: ReadonlyArray<TestModule>, unhandledErrors: number, reason: TestRunEndReason): SummaryCounts {
  const counts = { passed: 0, failed: 0, skipped: 0 };
  for (const testModule of testModules) {
    if (testModule.errors().length > 0) counts.failed++;
    for (const testCase of testModule.children.allTests()) {
      const { state } = testCase.result();
      if (state === 'passed') counts.passed++;
      else if (state === 'failed') counts.failed++;
      else counts.skipped++;
    }
  }
  counts.failed += unhandledErrors;
  if (reason === 'failed' && counts.failed === 0) counts.failed = 1;
  return counts;
}

/** Ends the run with one plain line, `tests: N passed, N failed, N skipped`, that any CI can read. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>, reason: TestRunEndReason): void {
    const { passed, failed, skipped } = summarise(testModules, unhandledErrors.length, reason);
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
