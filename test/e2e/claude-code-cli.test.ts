import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RequestLogEntry } from '../../src/store/index.js';
import { startFakeAnthropicUpstream, type FakeAnthropicUpstream } from '../fake-upstreams/anthropic-upstream.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { runClaude, type ClaudeRun } from '../support/claude-code-cli.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

/**
 * The real Claude Code CLI (`@anthropic-ai/claude-code`, a devDependency) through the gateway by
 * its two variables (`ANTHROPIC_BASE_URL`, `ANTHROPIC_AUTH_TOKEN`), with its non-essential traffic
 * off: a non-interactive turn (`claude -p`) that reads a file with its Read tool and answers from
 * what it read. Once against an Anthropic upstream (passed through: the fake replays recorded
 * Anthropic streams, calling Read), once against an OpenAI upstream (converted both ways). Claude
 * Code asks for models by names of its own; the gateway's models take them by an alias prefix.
 */
const API_KEY = 'sk-ant-api03-test-key';

let anthropic: FakeAnthropicUpstream;
let openai: FakeOpenAIUpstream;
let running: TestGateway;
let directory: string;
let home: string;
let workdir: string;
let notes: string;

function claude(prompt: string, token: string): Promise<ClaudeRun> {
  return runClaude(['-p', prompt], { home, workdir, baseUrl: running.gateway.url, token });
}

/** The request log's rows of a team, once `count` are written, oldest first. */
async function rowsOf(team: string, count: number): Promise<RequestLogEntry[]> {
  return vi.waitFor(
    async () => {
      const rows = (await running.gateway.stores.requestLogs.query({ limit: 50 })).filter((row) => row.team === team);
      if (rows.length < count) throw new Error(`${rows.length} of ${count} rows written`);
      return rows.reverse();
    },
    { timeout: 5_000, interval: 20 },
  );
}

beforeAll(async () => {
  anthropic = await startFakeAnthropicUpstream({ apiKey: API_KEY });
  openai = await startFakeOpenAIUpstream();
  running = await startTestGateway({
    upstreams: [
      { id: 'claude', provider: 'anthropic', base_url: anthropic.url, api_key: API_KEY },
      { id: 'gpt', provider: 'openai', base_url: openai.url, api_key: 'sk-test' },
    ],
    models: [
      { id: 'claude-sonnet', type: 'chat', aliases: ['claude-*'], routes: [{ upstream: 'claude', model: 'claude-sonnet-4-20250514' }] },
      { id: 'gpt-coder', type: 'chat', aliases: ['gpt-coder-*'], routes: [{ upstream: 'gpt', model: 'gpt-4.1' }] },
    ],
    request_log: { flush_interval_ms: 20 },
  });
  directory = mkdtempSync(join(tmpdir(), 'switchyard-claude-code-'));
  home = join(directory, 'home');
  workdir = join(directory, 'work');
  mkdirSync(home);
  mkdirSync(workdir);
  notes = join(workdir, 'notes.txt');
  writeFileSync(notes, 'The answer is 42.\n');
});

afterAll(async () => {
  await running?.close();
  await anthropic?.close();
  await openai?.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('Claude Code through /v1/messages', () => {
  it('completes a turn that uses a tool against an Anthropic upstream, passed through', async () => {
    const token = await running.createToken({ team: 'claude-passthrough', scopes: ['chat'] });
    anthropic.options = { toolUse: { name: 'Read', input: { file_path: notes } } };
    const run = await claude('What does notes.txt say?', token);
    expect(run.code, run.stderr).toBe(0);
    // The recorded text answer that follows a tool result.
    expect(run.stdout).toContain('Hello there!');

    // Two calls: the one that asked for Read, and the one that carried what Read returned.
    const [first, second] = anthropic.requests;
    expect(anthropic.requests).toHaveLength(2);
    expect(first?.headers['anthropic-beta']).toContain('claude-code-');
    expect((first?.body as { model: string }).model).toBe('claude-sonnet-4-20250514');
    expect(JSON.stringify(second?.body)).toContain('The answer is 42.');
    // Passed through: what Claude Code sent, but for the model, arrived as it was sent.
    expect((second?.body as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name)).toContain('Read');

    // One session, Claude Code's own, on both rows; usage read off the stream.
    const rows = await rowsOf('claude-passthrough', 2);
    expect(rows.map((row) => [row.endpoint, row.model, row.status, row.sessionSource])).toEqual([
      ['messages', 'claude-sonnet', 200, 'claude_code'],
      ['messages', 'claude-sonnet', 200, 'claude_code'],
    ]);
    expect(rows[1]?.sessionId).toBe(rows[0]?.sessionId);
    expect(rows[0]?.promptTokens).toBeGreaterThan(0);
  }, 90_000);

  it('completes a turn that uses a tool against an OpenAI upstream, converted both ways', async () => {
    const token = await running.createToken({ team: 'claude-converted', scopes: ['chat'] });
    openai.options = { toolCall: { name: 'Read', arguments: { file_path: notes } }, completionText: 'The notes say 42.' };
    const run = await runClaude(['-p', 'What does notes.txt say?', '--model', 'gpt-coder-1'], { home, workdir, baseUrl: running.gateway.url, token });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('The notes say 42.');

    const [first, second] = openai.requests.filter((request) => request.path === '/v1/chat/completions');
    const firstBody = first?.body as { model: string; stream: boolean; tools: Array<{ type: string; function: { name: string } }> };
    expect(firstBody.model).toBe('gpt-4.1');
    expect(firstBody.stream).toBe(true);
    expect(firstBody.tools.map((tool) => tool.function.name)).toContain('Read');
    // The tool's result came back as a chat tool message answering the call.
    const messages = (second?.body as { messages: Array<{ role: string; content: unknown; tool_call_id?: string }> }).messages;
    const result = messages.at(-1);
    expect(result?.role).toBe('tool');
    expect(String(result?.content)).toContain('The answer is 42.');
    const rows = await rowsOf('claude-converted', 2);
    expect(rows.map((row) => [row.endpoint, row.model, row.status, row.sessionSource])).toEqual([
      ['messages', 'gpt-coder', 200, 'claude_code'],
      ['messages', 'gpt-coder', 200, 'claude_code'],
    ]);
  }, 90_000);
});
