import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_REPLY_TEXT, parseSseText, startFakeChatGpt, type FakeChatGpt } from '../fake-upstreams/chatgpt-upstream.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/**
 * `POST /v1/responses` on a ChatGPT account (codex): the backend is sent the Responses API as
 * such, not a request that went through chat (a namespace tool and the reasoning summary arrive
 * as the caller sent them, `instructions` in its own field), with the whole conversation, since
 * it keeps nothing; the gateway stores each response, so the next turn's `previous_response_id`
 * works, streamed or not.
 */
let backend: FakeChatGpt;
let running: TestGateway;
let token: string;

/** The public id; the backend knows the model as UPSTREAM_MODEL. */
const MODEL = 'codex-fast';
const UPSTREAM_MODEL = 'gpt-5.1-codex';

const NAMESPACE_TOOL = {
  type: 'namespace',
  name: 'multi_agent_v1',
  description: 'Sub-agents.',
  tools: [
    {
      type: 'function',
      name: 'spawn_agent',
      description: 'Starts a sub-agent.',
      parameters: { type: 'object', properties: { task: { type: 'string' } }, required: ['task'] },
      strict: false,
    },
  ],
};
const EXEC_TOOL = { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } }, strict: false };

async function create(body: Record<string, unknown>): Promise<{ status: number; text: string; requestId: string | null }> {
  const response = await fetch(`${running.gateway.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, ...body }),
  });
  return { status: response.status, text: await response.text(), requestId: response.headers.get('x-request-id') };
}

/** The request log row of a request, once it is written. */
async function logRow(requestId: string | null): Promise<Record<string, unknown>> {
  for (let tries = 0; tries < 200; tries++) {
    const [row] = requestId === null ? [] : await running.gateway.stores.requestLogs.query({ requestId, limit: 1 });
    if (row !== undefined) return row as unknown as Record<string, unknown>;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no request log row for ${String(requestId)}`);
}

function sentBody(index: number): Record<string, unknown> {
  return backend.requests[index]?.body as Record<string, unknown>;
}

beforeAll(async () => {
  backend = await startFakeChatGpt();
  backend.addAccount({ accountId: 'acct-a', planType: 'plus' });
  const authDirectory = mkdtempSync(join(tmpdir(), 'switchyard-codex-responses-'));
  writeFileSync(join(authDirectory, 'a.json'), backend.authJson('acct-a'), { mode: 0o600 });
  running = await startTestGateway({
    upstreams: [{ id: 'chatgpt-a', provider: 'codex', base_url: backend.baseUrl, token_url: backend.tokenUrl, auth_file: join(authDirectory, 'a.json') }],
    models: [{ id: MODEL, type: 'chat', routes: [{ upstream: 'chatgpt-a', model: UPSTREAM_MODEL }] }],
    request_log: { flush_interval_ms: 20 },
  });
  token = (await running.gateway.tokens.create({ team: 'codex-users', scopes: ['chat'] })).secret;
});

afterAll(async () => {
  await running?.close();
  await backend?.close();
});

beforeEach(() => {
  backend.requests.length = 0;
  backend.reply = () => ({ kind: 'text', text: DEFAULT_REPLY_TEXT });
});

describe('/v1/responses on a ChatGPT account', () => {
  it('sends the Responses API as such (a namespace tool intact), and continues the stored conversation by previous_response_id', async () => {
    const first = await create({
      instructions: 'Be brief.',
      input: 'Say hello.',
      tools: [NAMESPACE_TOOL, EXEC_TOOL],
      reasoning: { effort: 'low', summary: 'auto' },
      metadata: { session_id: 'conversation-1' },
    });
    expect(first.status, first.text).toBe(200);
    const response = JSON.parse(first.text) as {
      id: string;
      model: string;
      status: string;
      output: Array<Record<string, unknown>>;
      usage: Record<string, unknown>;
    };
    expect(response).toMatchObject({ model: MODEL, status: 'completed' });
    expect(response.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(response.output).toEqual([
      expect.objectContaining({ type: 'message', role: 'assistant', content: [expect.objectContaining({ type: 'output_text', text: DEFAULT_REPLY_TEXT })] }),
    ]);
    expect(response.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number) });
    expect(await logRow(first.requestId)).toMatchObject({
      endpoint: 'responses',
      model: MODEL,
      promptTokens: response.usage['input_tokens'],
      completionTokens: response.usage['output_tokens'],
      usageSource: 'upstream',
    });

    const sent = sentBody(0);
    // Through chat, the namespace became a function `multi_agent_v1__spawn_agent`, the
    // instructions a developer message, and the reasoning its effort alone.
    expect(sent['tools']).toEqual([NAMESPACE_TOOL, EXEC_TOOL]);
    expect(sent['instructions']).toBe('Be brief.');
    expect(sent['reasoning']).toEqual({ effort: 'low', summary: 'auto' });
    expect(sent).toMatchObject({ model: UPSTREAM_MODEL, stream: true, store: false, input: [{ type: 'message', role: 'user', content: 'Say hello.' }] });
    expect(sent).not.toHaveProperty('metadata');

    const second = await create({ previous_response_id: response.id, input: 'And again?', stream: true });
    expect(second.status, second.text).toBe(200);
    const events = parseSseText(second.text);
    expect(events[0]?.event).toBe('response.created');
    const completed = events.at(-1);
    expect(completed?.event).toBe('response.completed');
    const final = completed?.data['response'] as { id: string; previous_response_id: string; model: string };
    expect(final).toMatchObject({ previous_response_id: response.id, model: MODEL });
    expect(events.map((event) => event.data['sequence_number'])).toEqual(events.map((_event, index) => index));
    // The backend keeps nothing: it is sent the whole conversation, without the gateway's ids.
    expect(sentBody(1)['input']).toEqual([
      { type: 'message', role: 'user', content: 'Say hello.' },
      { type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: DEFAULT_REPLY_TEXT, annotations: [], logprobs: [] }] },
      { type: 'message', role: 'user', content: 'And again?' },
    ]);
    expect(sentBody(1)).not.toHaveProperty('previous_response_id');

    const third = await create({ previous_response_id: final.id, input: 'Once more.' });
    expect(third.status, third.text).toBe(200);
    expect((sentBody(2)['input'] as unknown[]).length).toBe(5);
  });

  it('answers a function call as a function_call item, and refuses a previous_response_id it does not keep', async () => {
    backend.reply = () => ({ kind: 'function_call', name: 'exec_command', arguments: '{"cmd":"ls -la"}' });
    const called = await create({ input: 'List the files.', tools: [EXEC_TOOL] });
    expect(called.status, called.text).toBe(200);
    const output = (JSON.parse(called.text) as { output: Array<Record<string, unknown>> }).output;
    expect(output).toEqual([expect.objectContaining({ type: 'function_call', name: 'exec_command', arguments: '{"cmd":"ls -la"}', status: 'completed' })]);
    expect(output[0]?.['id']).toMatch(/^fc_/);

    const unknown = await create({ previous_response_id: 'resp_unknown', input: 'And?' });
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.text)).toMatchObject({ error: { code: 'previous_response_not_found', param: 'previous_response_id' } });
  });
});
