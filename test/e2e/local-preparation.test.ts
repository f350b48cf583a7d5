import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

const wordVectorFiles = (directory: string) => readdirSync(directory).filter((name) => /^glove-v1-\d+\.bin$/.test(name));

/** The local embedding engine's one-time preparation (converting the word vectors) happens at start, said in the log, not on the first caller's request. */
describe('the local provider prepares its word vectors at start', () => {
  let test: TestGateway;
  let cacheDirectory: string;
  const logLines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    cacheDirectory = mkdtempSync(join(tmpdir(), 'switchyard-local-cache-'));
    test = await startTestGateway(
      { upstreams: [{ id: 'local', provider: 'local', cache_dir: cacheDirectory, models_dir: join(cacheDirectory, 'no-models') }], models: [] },
      { logLines },
    );
  }, 120_000);
  afterAll(async () => {
    await test?.close();
    rmSync(cacheDirectory, { recursive: true, force: true });
  });

  it('names the preparation in the start-up log and has the file before the first call, which does not make it again', async () => {
    const messages = logLines.map((line) => String(line['msg']));
    expect(messages.some((message) => message.includes('preparing the word vectors of local-embed'))).toBe(true);
    expect(messages.some((message) => message.includes('word vectors ready'))).toBe(true);
    const [file] = wordVectorFiles(cacheDirectory);
    expect(file).toBeDefined();
    const before = statSync(join(cacheDirectory, file as string));
    expect(before.size).toBeGreaterThan(100_000_000);

    const linesAtStart = logLines.length;
    const embedding = await test.client.embeddings.create({ model: 'local-embed', input: 'the first caller' });
    expect(embedding.data[0]?.embedding).toHaveLength(100);
    const after = statSync(join(cacheDirectory, file as string));
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect(wordVectorFiles(cacheDirectory)).toEqual([file]);
    expect(
      logLines
        .slice(linesAtStart)
        .map((line) => String(line['msg']))
        .filter((message) => message.includes('word vectors')),
    ).toEqual([]);
  });
});
