import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { median, streamProbe, type StreamRequest } from './load.js';
import { preciseCpuSeconds } from './process-stats.js';
import { launchSwitchyard, type BenchContext, type Target } from './targets.js';

/**
 * `/v1/messages` (issue 35) against the fast fake upstream, beside a chat stream through the same
 * gateway process, taking turns round by round: chat completions to an openai upstream (the
 * reference), Messages passed through to an anthropic upstream (bound: no more gateway CPU per
 * stream than the reference), and Messages converted for the openai upstream (bound: its first
 * byte within 0.5 ms of the reference's, which is the upstream's first chunk passed on). All three
 * streams carry the same ~20-delta answer.
 */
export const MESSAGES_PATH = '/v1/messages';

export interface MessagesFigures {
  rounds: number;
  probesPerRound: number;
  /** Per round, in turn: chat to openai, Messages passed through to anthropic, Messages converted for openai. */
  chatFirstByteMs: number[];
  passthroughFirstByteMs: number[];
  convertedFirstByteMs: number[];
  chatCpuMicrosecondsPerStream: number[];
  passthroughCpuMicrosecondsPerStream: number[];
  convertedCpuMicrosecondsPerStream: number[];
}

/** A turn as Claude Code sends one, in short: a system prompt, the user's words, streamed. */
function messagesBody(model: string): string {
  return JSON.stringify({
    model,
    max_tokens: 64,
    stream: true,
    system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }],
    messages: [{ role: 'user', content: 'Say hello in one short paragraph.' }],
  });
}

const messagesStream = (model: string): StreamRequest => ({ path: MESSAGES_PATH, body: messagesBody(model), endMarker: 'message_stop' });

function startMessagesTarget(context: BenchContext): Promise<Target> {
  const directory = join(context.workDirectory, 'messages');
  mkdirSync(directory, { recursive: true });
  return launchSwitchyard(
    context,
    { root: context.root, name: 'messages', label: 'Switchyard (messages)' },
    `server: { host: 127.0.0.1, port: 0 }
database: { url: "sqlite:${join(directory, 'switchyard.db')}" }
logging: { level: info }
upstreams:
  - { id: fast-a, provider: openai, base_url: "${context.upstreamOrigin}/v1", api_key: sk-bench-a }
  - { id: fast-anthropic, provider: anthropic, base_url: "${context.upstreamOrigin}", api_key: sk-ant-bench }
models:
  - id: bench-model
    type: chat
    routes: [{ upstream: fast-a, model: gpt-4o-mini }]
  - id: claude-bench
    type: chat
    routes: [{ upstream: fast-anthropic, model: claude-sonnet-4-20250514 }]
`,
  );
}

export async function runMessagesScenario(
  context: BenchContext,
  options: { rounds: number; probes: number },
  say: (line: string) => void,
): Promise<MessagesFigures> {
  const target = await startMessagesTarget(context);
  const figures: MessagesFigures = {
    rounds: options.rounds,
    probesPerRound: options.probes,
    chatFirstByteMs: [],
    passthroughFirstByteMs: [],
    convertedFirstByteMs: [],
    chatCpuMicrosecondsPerStream: [],
    passthroughCpuMicrosecondsPerStream: [],
    convertedCpuMicrosecondsPerStream: [],
  };
  const paths: Array<{ stream: StreamRequest | undefined; firstByte: number[]; cpu: number[] }> = [
    { stream: undefined, firstByte: figures.chatFirstByteMs, cpu: figures.chatCpuMicrosecondsPerStream },
    { stream: messagesStream('claude-bench'), firstByte: figures.passthroughFirstByteMs, cpu: figures.passthroughCpuMicrosecondsPerStream },
    { stream: messagesStream('bench-model'), firstByte: figures.convertedFirstByteMs, cpu: figures.convertedCpuMicrosecondsPerStream },
  ];
  try {
    say('messages: warming up');
    for (let warm = 0; warm < 10; warm++) for (const path of paths) await streamProbe(target, 100, path.stream);
    for (let round = 0; round < options.rounds; round++) {
      // Taking turns within a round, so that the host's drift is shared by the three paths.
      for (const path of paths) {
        const before = preciseCpuSeconds(target.pid);
        const probe = await streamProbe(target, options.probes, path.stream);
        path.cpu.push(((preciseCpuSeconds(target.pid) - before) * 1_000_000) / options.probes);
        path.firstByte.push(probe.firstByteMs);
      }
    }
  } finally {
    await target.stop();
  }
  return figures;
}

export function renderMessagesSection(figures: MessagesFigures): string {
  const list = (values: number[], digits: number) => values.map((value) => value.toFixed(digits)).join(', ');
  const each = (over: number[], under: number[]) => over.map((value, index) => value - (under[index] ?? value));
  const ratio = (over: number[], under: number[]) => over.map((value, index) => value / (under[index] ?? value));
  const cpuRatio = ratio(figures.passthroughCpuMicrosecondsPerStream, figures.chatCpuMicrosecondsPerStream);
  const convertedLater = each(figures.convertedFirstByteMs, figures.chatFirstByteMs);
  return [
    '## Anthropic Messages API (`/v1/messages`)',
    '',
    `${figures.rounds} rounds of ${figures.probesPerRound} streams each way through one gateway process, one connection, taking turns; CPU from the scheduler's run time of the gateway's threads (nanoseconds).`,
    '',
    '| path | first byte (median of rounds) | gateway CPU per stream |',
    '|---|---:|---:|',
    `| chat stream, openai upstream | ${median(figures.chatFirstByteMs).toFixed(3)} ms | ${median(figures.chatCpuMicrosecondsPerStream).toFixed(0)} µs |`,
    `| Messages passed through, anthropic upstream | ${median(figures.passthroughFirstByteMs).toFixed(3)} ms | ${median(figures.passthroughCpuMicrosecondsPerStream).toFixed(0)} µs |`,
    `| Messages converted, openai upstream | ${median(figures.convertedFirstByteMs).toFixed(3)} ms | ${median(figures.convertedCpuMicrosecondsPerStream).toFixed(0)} µs |`,
    '',
    `- Passed through ÷ chat, CPU per stream, round by round: ${list(cpuRatio, 2)} (median ${median(cpuRatio).toFixed(2)}; bound 1.00).`,
    `- Converted − chat first byte, round by round: ${list(convertedLater, 3)} ms (median ${median(convertedLater).toFixed(3)} ms; bound 0.5 ms).`,
    '',
  ].join('\n');
}
