import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startOpenAIFakeGateway, type OpenAIFakeGateway } from '../support/start-openai-fake-gateway.js';
import { cli } from '../support/run-cli.js';

let harness: OpenAIFakeGateway;

beforeAll(async () => {
  harness = await startOpenAIFakeGateway();
});
afterAll(async () => {
  await harness.close();
});

const ask = (client: OpenAI) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }).withResponse();

async function refused(client: OpenAI): Promise<InstanceType<typeof OpenAI.RateLimitError>> {
  const error = await ask(client).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.RateLimitError);
  return error as InstanceType<typeof OpenAI.RateLimitError>;
}

/** Waits until the running gateway has reloaded its token cache (another process changed the database). */
function eventually(check: () => Promise<boolean>): Promise<void> {
  return vi.waitFor(async () => expect(await check(), 'the running gateway never saw the change').toBe(true), { timeout: 2_000, interval: 20 });
}

describe('limits changed with the CLI reach a running gateway', () => {
  it('teams update --rpm and projects update --tokens-total apply from the next requests; none removes a limit', async () => {
    const run = (...argv: string[]) => cli(...argv, '--config', harness.configPath);
    expect((await run('teams', 'create', 'cli-limits')).code).toBe(0);
    expect((await run('projects', 'create', 'web', '--team', 'cli-limits')).code).toBe(0);
    const created = await run('tokens', 'create', '--team', 'cli-limits', '--project', 'web', '--rpm', '100');
    expect(created.code).toBe(0);
    const client = harness.clientFor(created.stdout.at(-1) as string);
    const { response } = await ask(client);
    expect(response.headers.get('x-ratelimit-limit-requests')).toBe('100');

    expect((await run('teams', 'update', 'cli-limits', '--rpm', '2')).code).toBe(0);
    // The first request the new limit counts, and its second: the third is refused.
    await eventually(async () => (await ask(client)).response.headers.get('x-ratelimit-limit-requests') === '2');
    await ask(client);
    expect((await refused(client)).message).toContain('for team "cli-limits"');

    expect((await run('teams', 'update', 'cli-limits', '--rpm', 'none')).code).toBe(0);
    expect((await run('projects', 'update', 'web', '--team', 'cli-limits', '--tokens-total', '1')).code).toBe(0);
    await eventually(async () => {
      const answer = await ask(client).catch((error: unknown) => error);
      return answer instanceof OpenAI.RateLimitError && answer.code === 'quota_exceeded';
    });
    expect((await refused(client)).message).toContain('project "web" of team "cli-limits"');
  });
});
