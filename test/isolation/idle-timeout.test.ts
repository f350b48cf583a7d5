import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChatGpt, type FakeChatGpt } from '../fake-upstreams/chatgpt-upstream.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/** An upstream that opens a stream, sends one event, then goes silent until the connection closes. */
let upstream: Server;
let running: TestGateway;
let chatgpt: FakeChatGpt;
let authDirectory: string;
let nativeToken: string;

beforeAll(async () => {
  upstream = createServer((request, response) => {
    request.resume();
    request.once('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      if (request.url?.endsWith('/chat/completions')) {
        response.write(
          `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] })}\n\n`,
        );
      } else {
        response.write(
          `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', object: 'response', status: 'in_progress', output: [] } })}\n\n`,
        );
      }
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  chatgpt = await startFakeChatGpt();
  chatgpt.addAccount({ accountId: 'acct-silent', planType: 'plus' });
  authDirectory = mkdtempSync(join(tmpdir(), 'switchyard-idle-auth-'));
  writeFileSync(join(authDirectory, 'auth.json'), chatgpt.authJson('acct-silent'), { mode: 0o600 });
  running = await startTestGateway({
    upstreams: [
      { id: 'silent', provider: 'openai', base_url: `${url}/v1`, api_key: 'sk-silent', timeouts: { idle_ms: 300 } },
      {
        id: 'silent-codex',
        provider: 'codex',
        base_url: `${url}/codex`,
        token_url: chatgpt.tokenUrl,
        auth_file: join(authDirectory, 'auth.json'),
        timeouts: { idle_ms: 300 },
      },
    ],
    models: [
      { id: 'silent', type: 'chat', routes: [{ upstream: 'silent', model: 'silent' }] },
      { id: 'silent-codex', type: 'chat', routes: [{ upstream: 'silent-codex', model: 'silent-codex' }] },
    ],
    request_log: { flush_interval_ms: 20 },
  });
  nativeToken = (await running.gateway.tokens.create({ team: 'codex-users', scopes: ['native'] })).secret;
});

afterAll(async () => {
  await running?.close();
  await chatgpt?.close();
  rmSync(authDirectory, { recursive: true, force: true });
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

async function rowOf(requestId: string): Promise<{ status: number; errorCode: string | null }> {
  const { status, errorCode } = await running.logRow(requestId);
  return { status, errorCode };
}

async function streamed(path: string, body: Record<string, unknown>, token = running.token): Promise<string> {
  const response = await fetch(`${running.gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  await response.arrayBuffer().catch(() => undefined);
  return response.headers.get('x-request-id') as string;
}

describe('a stream cut because its upstream went silent past idle_ms', () => {
  it('is logged as the upstream timeout it was (504 upstream_timeout) when the cut ends the response, not as a client that left (499)', async () => {
    const native = await streamed(
      '/v1/native/responses',
      { model: 'silent-codex', store: false, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }] },
      nativeToken,
    );
    expect(await rowOf(native)).toEqual({ status: 504, errorCode: 'upstream_timeout' });
  });

  it('keeps the 200 it was answered with when the timeout was said in-band, with the code upstream_timeout', async () => {
    for (const id of [
      await streamed('/v1/chat/completions', { model: 'silent', messages: [{ role: 'user', content: 'Hi' }] }),
      await streamed('/v1/responses', { model: 'silent', input: 'Hi' }),
    ]) {
      expect(await rowOf(id)).toEqual({ status: 200, errorCode: 'upstream_timeout' });
    }
  });
});
