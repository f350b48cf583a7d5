import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropicUpstream, type FakeAnthropicUpstream } from '../fake-upstreams/anthropic-upstream.js';
import { startFakeGeminiUpstream, type FakeGeminiUpstream } from '../fake-upstreams/gemini-upstream.js';
import { runCodex, writeCodexConfig, type CodexRun } from '../support/codex-cli.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/**
 * The real Codex CLI through `/v1/responses` to models the gateway converts to chat: an Anthropic
 * and a Gemini one (the fake upstreams). Codex 0.171 sends its multi-agent tools as a `namespace`
 * and a hosted `web_search` tool (test/fixtures/codex-cli/responses-request-0.171.0.json). Each
 * upstream answers a tool call to one of Codex's functions, Codex runs it and sends the result,
 * and the upstream's final text ends the turn.
 */
const ANTHROPIC_KEY = 'sk-ant-api03-codex-test';
const GEMINI_KEY = 'AIza-codex-test';
/** The last words of the recorded answers the fakes give once the tool has run. */
const CLAUDE_FINAL_TEXT = 'Hello there!';
const GEMINI_FINAL_TEXT = 'There are **3**';
const CHAT_FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;

let anthropic: FakeAnthropicUpstream;
let gemini: FakeGeminiUpstream;
let running: TestGateway;
let home: string;
let workdir: string;
const logLines: Array<Record<string, unknown>> = [];

function codex(model: string, prompt: string): Promise<CodexRun> {
  return runCodex(['exec', '--json', '--skip-git-repo-check', '-m', model, prompt], { home, workdir, token: running.token });
}

/** What Codex said last (`exec --json` prints each agent message as it completes). */
function lastMessage(run: CodexRun): unknown {
  return events(run)
    .filter((event) => event.type === 'item.completed' && event.item?.['type'] === 'agent_message')
    .at(-1)?.item?.['text'];
}

/** The JSON lines `codex exec --json` printed. */
function events(run: CodexRun): Array<{ type: string; item?: Record<string, unknown> }> {
  return run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { type: string; item?: Record<string, unknown> });
}

beforeAll(async () => {
  anthropic = await startFakeAnthropicUpstream({ apiKey: ANTHROPIC_KEY });
  gemini = await startFakeGeminiUpstream();
  running = await startTestGateway(
    {
      upstreams: [
        { id: 'claude', provider: 'anthropic', base_url: anthropic.url, api_key: ANTHROPIC_KEY },
        { id: 'gemini', provider: 'gemini', base_url: gemini.url, api_key: GEMINI_KEY },
      ],
      models: [
        { id: 'claude-sonnet', type: 'chat', routes: [{ upstream: 'claude', model: 'claude-sonnet-4-20250514' }] },
        { id: 'gemini-flash', type: 'chat', routes: [{ upstream: 'gemini', model: 'gemini-2.5-flash' }] },
      ],
      logging: { level: 'info' },
    },
    { logLines },
  );
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-codex-converted-'));
  home = join(directory, 'home');
  workdir = join(directory, 'work');
  mkdirSync(workdir);
  writeCodexConfig(home, 'claude-sonnet', `${running.gateway.url}/v1`);
});

afterAll(async () => {
  await running?.close();
  await anthropic?.close();
  await gemini?.close();
});

describe('Codex CLI 0.171 through /v1/responses to converted models', () => {
  it("completes a turn on an Anthropic model that calls one of Codex's namespaced functions", async () => {
    anthropic.options = { toolUse: { name: 'multi_agent_v1__close_agent', input: { target: 'agent-that-does-not-exist' } } };
    const run = await codex('claude-sonnet', 'Close the helper agent, then say hello');
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const printed = events(run);
    expect(lastMessage(run)).toContain(CLAUDE_FINAL_TEXT);
    expect(printed.at(-1)?.type).toBe('turn.completed');

    // The first request offered Codex's functions, the namespace's flattened, web_search left out.
    expect(anthropic.requests).toHaveLength(2);
    const [first, second] = anthropic.requests.map(
      (request) => request.body as { tools: Array<{ name: string }>; messages: Array<{ role: string; content: unknown }> },
    );
    const offered = first?.tools.map((tool) => tool.name) ?? [];
    expect(offered).toEqual(
      expect.arrayContaining(['exec_command', 'multi_agent_v1__close_agent', 'multi_agent_v1__spawn_agent', 'multi_agent_v1__wait_agent']),
    );
    for (const name of offered) expect(name).toMatch(CHAT_FUNCTION_NAME);
    expect(JSON.stringify(first?.tools)).not.toContain('web_search');

    // Codex took the call as its namespace's close_agent (an unknown name would be "unsupported
    // call"), ran it, and sent back the call (with its namespace) and the result; the gateway gave
    // the call its chat name again.
    const blocks = (second?.messages ?? []).flatMap((message) => (Array.isArray(message.content) ? (message.content as Array<Record<string, unknown>>) : []));
    const call = blocks.find((block) => block['type'] === 'tool_use');
    const result = blocks.find((block) => block['type'] === 'tool_result');
    expect(call).toMatchObject({ name: 'multi_agent_v1__close_agent', input: { target: 'agent-that-does-not-exist' } });
    expect(result?.['tool_use_id']).toBe(call?.['id']);
    expect(JSON.stringify(result)).not.toMatch(/unsupported call/i);
    expect(result?.['content']).toMatch(/^invalid agent id agent-that-does-not-exist/);

    // web_search was left out with one warning, which the next turn does not repeat.
    const warnings = logLines.filter((line) => line['tool_type'] === 'web_search');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, model: 'claude-sonnet' });
  }, 120_000);

  it('completes a turn on a Gemini model that calls exec_command, which Codex runs', async () => {
    gemini.options = { splitBytes: true, functionCall: { name: 'exec_command', args: { cmd: 'echo switchyard-ran-this' } } };
    const run = await codex('gemini-flash', 'Run the echo, then answer');
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const printed = events(run);
    expect(lastMessage(run)).toContain(GEMINI_FINAL_TEXT);
    expect(printed.at(-1)?.type).toBe('turn.completed');

    expect(gemini.requests).toHaveLength(2);
    const [first, second] = gemini.requests.map(
      (request) =>
        request.body as { tools: Array<{ functionDeclarations: Array<{ name: string }> }>; contents: Array<{ parts: Array<Record<string, unknown>> }> },
    );
    const declared = (first?.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []).map((declaration) => declaration.name);
    expect(declared).toEqual(expect.arrayContaining(['exec_command', 'multi_agent_v1__close_agent']));
    for (const name of declared) expect(name).toMatch(CHAT_FUNCTION_NAME);
    // Codex ran the command: its output is the function's response.
    const response = second?.contents.at(-1)?.parts.find((part) => part['functionResponse'] !== undefined);
    expect(response).toMatchObject({ functionResponse: { name: 'exec_command' } });
    expect(JSON.stringify(response)).toContain('switchyard-ran-this');
  }, 120_000);
});
