import type { Reporter, TestModule, TestRunEndReason } from 'vitest/node';

export interface SummaryCounts {
  passed: number;
  failed: number;
  skipped: number;
  /** `test.fails` tests that failed, as they should: vitest's "expected fail", not a pass. */
  expectedFail: number;
  /** `test.todo`: vitest counts them apart from the skipped. */
  todo: number;
}

/**
 * The counts the closing line reports, as vitest's own summary counts them. A test file that
 * failed to load (an import that throws, a syntax error) has no tests to count, so it counts as
 * one failed; so does each error raised outside any test. A run that failed for a reason none of
 * these name still says `failed` ≥ 1: the line never disagrees with the exit code.
 */
export function summarise(testModules: ReadonlyArray<TestModule>, unhandledErrors: number, reason: TestRunEndReason): SummaryCounts {
  const counts = { passed: 0, failed: 0, skipped: 0, expectedFail: 0, todo: 0 };
  for (const testModule of testModules) {
    if (testModule.errors().length > 0) counts.failed++;
    for (const testCase of testModule.children.allTests()) {
      const { state } = testCase.result();
      // A `test.fails` whose body failed is reported `passed` (and one whose body passed, `failed`).
      if (state === 'passed') {
        if (testCase.options.fails === true) counts.expectedFail++;
        else counts.passed++;
      } else if (state === 'failed') counts.failed++;
      else if (testCase.options.mode === 'todo') counts.todo++;
      else counts.skipped++;
    }
  }
  counts.failed += unhandledErrors;
  if (reason === 'failed' && counts.failed === 0) counts.failed = 1;
  return counts;
}

/** The closing line: the three counts always, the rarer two only when there are any (as vitest shows them). */
export function summaryLine({ passed, failed, skipped, expectedFail, todo }: SummaryCounts): string {
  const rare = [expectedFail > 0 ? `${expectedFail} expected fail` : null, todo > 0 ? `${todo} todo` : null].filter((part) => part !== null);
  return ['tests: ' + `${passed} passed, ${failed} failed, ${skipped} skipped`, ...rare].join(', ');
}

/** Ends the run with one plain line, `tests: N passed, N failed, N skipped`, that any CI can read. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>, reason: TestRunEndReason): void {
    process.stdout.write(`\n${summaryLine(summarise(testModules, unhandledErrors.length, reason))}\n`);
  }
}
