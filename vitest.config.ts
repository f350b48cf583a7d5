import { defineConfig } from 'vitest/config';

const shared = {
  testTimeout: 20_000,
  hookTimeout: 30_000,
  pool: 'forks',
} as const;

export default defineConfig({
  test: {
    globalSetup: ['test/support/report-skipped-suites.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        test: {
          ...shared,
          name: 'gateway',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['test/isolation/**', 'test/scale/**'],
        },
      },
      {
        // The isolation suites measure what one process holds and how long its event loop waits
        // while another tenant attacks it, and the scale suites run several gateway processes and
        // the servers they need: they run after the others, one file at a time, so the figures
        // they assert are the gateway's and not the machine's other test files'.
        test: {
          ...shared,
          name: 'isolation',
          include: ['test/isolation/**/*.test.ts', 'test/scale/**/*.test.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
