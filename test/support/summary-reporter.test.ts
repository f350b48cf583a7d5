import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const VITEST = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));
const REPORTER = fileURLToPath(new URL('./summary-reporter.ts', import.meta.url));

/** Runs vitest on `files` with the summary reporter alone; returns its closing line and exit code. */
function runVitest(files: Record<string, string>): { line: string | undefined; status: number | null } {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-reporter-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(directory, name), text);
    writeFileSync(join(directory, 'vitest.config.mjs'), `export default { test: { include: ['*.test.mjs'], reporters: [${JSON.stringify(REPORTER)}] } };\n`);
    const run = spawnSync(process.execPath, [VITEST, 'run', '--root', directory], { cwd: directory, encoding: 'utf8', timeout: 60_000 });
    return { line: run.stdout.split('\n').find((text) => text.startsWith('tests: ')), status: run.status };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const PASSES = `import { it, expect } from 'vitest';\nit('passes', () => expect(1).toBe(1));\n`;

describe('the summary line', () => {
  it('counts a test file that fails to import as failed, and skipped tests as skipped, agreeing with the exit code', () => {
    const { line, status } = runVitest({
      'passes.test.mjs': PASSES,
      'skips.test.mjs': `import { it } from 'vitest';\nit.skip('is skipped', () => {});\nit.skipIf(true)('is skipped too', () => {});\n`,
      'broken.test.mjs': `import './does-not-exist.mjs';\nimport { it } from 'vitest';\nit('never runs', () => {});\n`,
    });
    expect(line).toBe('tests: 1 passed, 1 failed, 2 skipped');
    expect(status).toBe(1);
  });

  it("counts a test.fails that failed as expected apart from passed, as vitest's own summary does, and one that passed as failed", () => {
    const { line, status } = runVitest({
      'passes.test.mjs': PASSES,
      'expected.test.mjs': `import { it, expect } from 'vitest';\nit.fails('fails as expected', () => expect(1).toBe(2));\nit.fails('fails as expected too', () => { throw new Error('no'); });\nit.todo('is to do');\n`,
    });
    expect(line).toBe('tests: 1 passed, 0 failed, 0 skipped, 2 expected fail, 1 todo');
    expect(status).toBe(0);
    const unexpected = runVitest({
      'unexpected.test.mjs': `import { it, expect } from 'vitest';\nit.fails('passes, unexpectedly', () => expect(1).toBe(1));\n`,
    });
    expect(unexpected.line).toBe('tests: 0 passed, 1 failed, 0 skipped');
    expect(unexpected.status).toBe(1);
  });

  it('says 0 failed only when the run passed', () => {
    const { line, status } = runVitest({ 'passes.test.mjs': PASSES });
    expect(line).toBe('tests: 1 passed, 0 failed, 0 skipped');
    expect(status).toBe(0);
  });
});
