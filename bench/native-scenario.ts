import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chatBody, concurrentStreams, median, streamProbe, type StreamRequest } from './load.js';
import { InspectorMemory, type HeldMemory } from './inspector-memory.js';
import { cpuSeconds } from './process-stats.js';
import { CHAT_PATH, freePort, launchSwitchyard, type BenchContext, type Target } from './targets.js';

/**
 * The native passthrough (`/v1/native/responses`) against the fast fake backend, beside the chat
 * stream through the same gateway process: the first byte of each, round by round (the issue's
 * bound: the native path within 0.5 ms of chat's), the gateway's CPU per native stream, and the
 * memory each open native stream holds (bound: 64 KB).
 */
export const NATIVE_PATH = '/v1/native/responses';

export interface NativeFigures {
  rounds: number;
  probesPerRound: number;
  chatFirstByteMs: number[];
  nativeFirstByteMs: number[];
  /** Native minus chat first byte, round by round. */
  firstByteDifferenceMs: number[];
  chatCpuMicrosecondsPerStream: number[];
  nativeCpuMicrosecondsPerStream: number[];
  /** Memory per open stream, each test on a fresh process: chat's slow stream for comparison, then native's. */
  memory: MemoryTest[];
}

export interface MemoryTest {
  label: string;
  count: number;
  completed: number;
  /** Peak RSS growth per stream (what the chat memory test reports). */
  rssBytesPerStream: number;
  /** Heap and external memory held per open stream, after a full collection, midway through the streams. */
  heldBytesPerStream: number;
}

/**
 * A request as Codex CLI sends it: a developer prompt (Codex's own first turn is 39.5 KB: 800
 * repeats make ~40 KB) and the user's turn.
 */
function nativeBody(model: string, promptRepeats = 800): string {
  const prompt = 'You are a coding agent running in the Codex CLI. '.repeat(promptRepeats);
  return JSON.stringify({
    model,
    stream: true,
    store: false,
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: prompt }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Say hello in one short paragraph.' }] },
    ],
    tools: [],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'medium' },
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'bench-session',
  });
}

/** An access token whose `exp` is far away, so the gateway never refreshes during the run. */
function authJson(): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = { 'https://api.openai.com/auth': { chatgpt_account_id: 'acct-bench', chatgpt_plan_type: 'pro' } };
  const jwt = (payload: Record<string, unknown>) => `${encode({ alg: 'RS256' })}.${encode(payload)}.c2lnbmF0dXJl`;
  return JSON.stringify({
    auth_mode: 'chatgpt',
    OPENAI_API_KEY: null,
    tokens: { id_token: jwt(claims), access_token: jwt({ ...claims, exp: 4_102_444_800 }), refresh_token: 'rt-bench', account_id: 'acct-bench' },
    last_refresh: new Date().toISOString(),
  });
}

export function startNativeTarget(context: BenchContext, nodeArguments: readonly string[] = []): Promise<Target> {
  const directory = join(context.workDirectory, 'native');
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, 'auth.json'), authJson(), { mode: 0o600 });
  return launchSwitchyard(
    context,
    { root: context.root, name: 'native', label: 'Switchyard (native)' },
    `server: { host: 127.0.0.1, port: 0 }
database: { url: "sqlite:${join(directory, 'switchyard.db')}" }
logging: { level: info }
upstreams:
  - { id: fast-a, provider: openai, base_url: "${context.upstreamOrigin}/v1", api_key: sk-bench-a }
  - { id: chatgpt-bench, provider: codex, base_url: "${context.upstreamOrigin}/backend-api/codex", token_url: "${context.upstreamOrigin}/oauth/token", auth_file: ./auth.json }
models:
  - id: bench-model
    type: chat
    routes: [{ upstream: fast-a, model: gpt-4o-mini }]
  - id: gpt-5.1-codex
    type: chat
    routes: [{ upstream: chatgpt-bench, model: gpt-5.1-codex }]
  - id: slow-stream
    type: chat
    routes: [{ upstream: chatgpt-bench, model: slow-stream }]
  - id: chat-slow-stream
    type: chat
    routes: [{ upstream: fast-a, model: slow-stream }]
`,
    nodeArguments,
  );
}

const nativeStream = (model: string, promptRepeats?: number): StreamRequest => ({
  path: NATIVE_PATH,
  body: nativeBody(model, promptRepeats),
  endMarker: 'response.completed',
});

export async function runNativeScenario(
  context: BenchContext,
  options: { rounds: number; probes: number; streams: number },
  say: (line: string) => void,
): Promise<NativeFigures> {
  let target = await startNativeTarget(context);
  const figures: NativeFigures = {
    rounds: options.rounds,
    probesPerRound: options.probes,
    chatFirstByteMs: [],
    nativeFirstByteMs: [],
    firstByteDifferenceMs: [],
    chatCpuMicrosecondsPerStream: [],
    nativeCpuMicrosecondsPerStream: [],
    memory: [],
  };
  try {
    say('native passthrough: warming up');
    for (let warm = 0; warm < 5; warm++) {
      await streamProbe(target, 200);
      await streamProbe(target, 200, nativeStream('gpt-5.1-codex'));
    }
    for (let round = 0; round < options.rounds; round++) {
      // Taking turns within a round, so that the host's drift is shared by both paths.
      const chatCpu = cpuSeconds(target.pid);
      const chat = await streamProbe(target, options.probes);
      const nativeCpu = cpuSeconds(target.pid);
      const native = await streamProbe(target, options.probes, nativeStream('gpt-5.1-codex'));
      const after = cpuSeconds(target.pid);
      figures.chatFirstByteMs.push(chat.firstByteMs);
      figures.nativeFirstByteMs.push(native.firstByteMs);
      figures.firstByteDifferenceMs.push(native.firstByteMs - chat.firstByteMs);
      figures.chatCpuMicrosecondsPerStream.push(((nativeCpu - chatCpu) * 1_000_000) / options.probes);
      figures.nativeCpuMicrosecondsPerStream.push(((after - nativeCpu) * 1_000_000) / options.probes);
    }
    // Each on a fresh process, as the chat memory test does: a grown heap would hide the streams' cost.
    const tests: Array<{ label: string; stream: StreamRequest }> = [
      { label: 'chat stream', stream: { path: CHAT_PATH, body: chatBody(true, 'chat-slow-stream'), endMarker: '[DONE]' } },
      { label: 'native stream, short body', stream: nativeStream('slow-stream', 1) },
      { label: 'native stream, Codex-sized body (~40 KB)', stream: nativeStream('slow-stream') },
    ];
    for (const test of tests) {
      await target.stop();
      const inspectPort = await freePort();
      target = await startNativeTarget(context, [`--inspect=127.0.0.1:${inspectPort}`]);
      const inspector = await InspectorMemory.connect(inspectPort);
      try {
        await streamProbe(target, 20, test.stream);
        say(`${options.streams} concurrent slow streams through a fresh gateway: ${test.label}`);
        const before = await inspector.held();
        let midway: HeldMemory | null = null;
        // The slow streams last ~6 s: by 3 s every one is open and sending.
        const result = await concurrentStreams(target, options.streams, test.stream, {
          afterMs: 3_000,
          probe: async () => {
            try {
              midway = await inspector.held();
            } catch (error) {
              say(`${test.label}: memory not read midway (${(error as Error).message})`);
            }
          },
        });
        const read = midway as HeldMemory | null;
        const held = read === null ? Number.NaN : read.heapUsed + read.external - (before.heapUsed + before.external);
        figures.memory.push({
          label: test.label,
          count: options.streams,
          completed: result.completed,
          rssBytesPerStream: result.bytesPerStream,
          heldBytesPerStream: held / options.streams,
        });
      } finally {
        inspector.close();
      }
    }
  } finally {
    await target.stop();
  }
  return figures;
}

export function renderNativeSection(figures: NativeFigures): string {
  const list = (values: number[], digits: number) => values.map((value) => value.toFixed(digits)).join(', ');
  return [
    '## Native passthrough (`/v1/native/responses`)',
    '',
    `${figures.rounds} rounds of ${figures.probesPerRound} streams each way through one gateway process, one connection, taking turns.`,
    '',
    '| path | first byte (median of rounds) | gateway CPU per stream |',
    '|---|---:|---:|',
    `| chat stream | ${median(figures.chatFirstByteMs).toFixed(3)} ms | ${median(figures.chatCpuMicrosecondsPerStream).toFixed(0)} µs |`,
    `| native stream | ${median(figures.nativeFirstByteMs).toFixed(3)} ms | ${median(figures.nativeCpuMicrosecondsPerStream).toFixed(0)} µs |`,
    '',
    `- Native − chat first byte, round by round: ${list(figures.firstByteDifferenceMs, 3)} ms (median ${median(figures.firstByteDifferenceMs).toFixed(3)} ms; bound 0.5 ms).`,
    '',
    `Memory per open stream, ${figures.memory[0]?.count ?? 0} slow streams at once, each test on a fresh process (bound for native: 64 KB):`,
    '',
    '| stream | completed | held per stream (heap + external, after a full GC) | peak RSS growth per stream |',
    '|---|---:|---:|---:|',
    ...figures.memory.map(
      (test) =>
        `| ${test.label} | ${test.completed} / ${test.count} | ${(test.heldBytesPerStream / 1024).toFixed(1)} KB | ${(test.rssBytesPerStream / 1024).toFixed(1)} KB |`,
    ),
    '',
  ].join('\n');
}
