import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChatGpt, type FakeChatGpt } from '../fake-upstreams/chatgpt-upstream.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';
import { QUOTED_SECRETS, startCallerSecretsUpstream, type CallerSecretsUpstream } from './support/caller-secrets-upstream.js';

/**
 * Keys an upstream quotes in its refusals and in-band stream errors never reach a caller: chat
 * (plain and streamed, through the official SDK), `/v1/responses` (passed through to an
 * OpenAI-compatible upstream), and the native passthrough to a Codex backend. Every byte the
 * caller receives, headers included, is searched.
 */
let upstream: CallerSecretsUpstream;
let chatgpt: FakeChatGpt;
let running: TestGateway;
let nativeToken: string;
let authDirectory: string;

beforeAll(async () => {
  upstream = await startCallerSecretsUpstream();
  chatgpt = await startFakeChatGpt();
  chatgpt.addAccount({ accountId: 'acct-leaky', planType: 'plus' });
  authDirectory = mkdtempSync(join(tmpdir(), 'switchyard-secrets-auth-'));
  writeFileSync(join(authDirectory, 'auth.json'), chatgpt.authJson('acct-leaky'), { mode: 0o600 });
  running = await startTestGateway({
    upstreams: [
      { id: 'leaky', provider: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-gateway-1234567890' },
      { id: 'leaky-codex', provider: 'codex', base_url: `${upstream.url}/codex`, token_url: chatgpt.tokenUrl, auth_file: join(authDirectory, 'auth.json') },
    ],
    models: [
      { id: 'refuse', type: 'chat', routes: [{ upstream: 'leaky', model: 'refuse' }] },
      { id: 'fail-midstream', type: 'chat', routes: [{ upstream: 'leaky', model: 'fail-midstream' }] },
      { id: 'codex-refuse', type: 'chat', routes: [{ upstream: 'leaky-codex', model: 'codex-refuse' }] },
      { id: 'codex-fail-midstream', type: 'chat', routes: [{ upstream: 'leaky-codex', model: 'codex-fail-midstream' }] },
    ],
  });
  nativeToken = (await running.gateway.tokens.create({ team: 'codex-users', scopes: ['native'] })).secret;
});

afterAll(async () => {
  await running?.close();
  await chatgpt?.close();
  await upstream?.close();
  rmSync(authDirectory, { recursive: true, force: true });
});

/** Everything the caller received: status line figures, headers and body bytes. */
async function received(path: string, body: Record<string, unknown>, token = running.token): Promise<{ status: number; text: string }> {
  const response = await fetch(`${running.gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = Buffer.from(await response.arrayBuffer()).toString('utf8');
  return { status: response.status, text: `${JSON.stringify([...response.headers])}\n${text}` };
}

function expectNoSecret(text: string): void {
  for (const secret of QUOTED_SECRETS) expect(text).not.toContain(secret);
}

const messages = [{ role: 'user', content: 'Hi' }];

describe('secrets an upstream quotes never reach the caller', () => {
  it('chat: a refusal (upstream_bad_request) and an in-band stream error, through the SDK and as bytes', async () => {
    const plain = await received('/v1/chat/completions', { model: 'refuse', messages });
    expect(plain.status).toBe(400);
    expect(plain.text).toContain('upstream_bad_request');
    // The upstream's explanation is kept, its key is not.
    expect(plain.text).toContain('Incorrect API key provided: sk-p…[redacted]');
    expectNoSecret(plain.text);
    const streamedRefusal = await received('/v1/chat/completions', { model: 'refuse', messages, stream: true });
    expect(streamedRefusal.status).toBe(400);
    expectNoSecret(streamedRefusal.text);
    const midStream = await received('/v1/chat/completions', { model: 'fail-midstream', messages, stream: true });
    expect(midStream.status).toBe(200);
    expect(midStream.text).toContain('"error"');
    expectNoSecret(midStream.text);

    const sdkError = await running.client.chat.completions
      .create({ model: 'refuse', messages: [{ role: 'user', content: 'Hi' }] })
      .catch((error: unknown) => error);
    expect(sdkError).toBeInstanceOf(OpenAI.APIError);
    expectNoSecret(`${(sdkError as Error).message} ${JSON.stringify((sdkError as InstanceType<typeof OpenAI.APIError>).error)}`);
    const stream = await running.client.chat.completions.create({ model: 'fail-midstream', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    const streamError = await (async () => {
      for await (const chunk of stream) void chunk;
    })().catch((error: unknown) => error);
    expect(streamError).toBeInstanceOf(Error);
    expectNoSecret(`${(streamError as Error).message} ${JSON.stringify((streamError as { error?: unknown }).error ?? null)}`);
  });

  it("/v1/responses passed through: a refusal, and the upstream stream's own error and response.failed events", async () => {
    const refused = await received('/v1/responses', { model: 'refuse', input: 'Hi' });
    expect(refused.status).toBe(400);
    expectNoSecret(refused.text);
    const refusedStream = await received('/v1/responses', { model: 'refuse', input: 'Hi', stream: true });
    expect(refusedStream.status).toBe(400);
    expectNoSecret(refusedStream.text);
    const failed = await received('/v1/responses', { model: 'fail-midstream', input: 'Hi', stream: true });
    expect(failed.status).toBe(200);
    expect(failed.text).toContain('event: response.created');
    expect(failed.text).toContain('event: error');
    expect(failed.text).toContain('event: response.failed');
    expect(failed.text).toContain('sk-p…[redacted]');
    expectNoSecret(failed.text);
    // The events still parse: only the secrets changed.
    const data = failed.text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice(6)) as { type: string });
    expect(data.map((event) => event.type)).toEqual(['response.created', 'error', 'response.failed']);
  });

  it("the native passthrough: a refusal, and the backend stream's own error and response.failed events", async () => {
    const body = { stream: true, store: false, instructions: 'x', input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }] };
    const refused = await received('/v1/native/responses', { ...body, model: 'codex-refuse' }, nativeToken);
    expect(refused.status).toBe(400);
    expectNoSecret(refused.text);
    const failed = await received('/v1/native/responses', { ...body, model: 'codex-fail-midstream' }, nativeToken);
    expect(failed.status).toBe(200);
    expect(failed.text).toContain('event: response.failed');
    expectNoSecret(failed.text);
  });
});
