import { GatewayError } from '../../errors/index.js';
import type { ChatStreamEvent } from '../provider-adapter.js';
import type { EventReader } from '../shared/read-events.js';
import type { ServerSentEvent } from '../shared/server-sent-events.js';
import { isGenerateContentResponse } from './check-gemini-response.js';
import { completionId } from './convert-gemini-response.js';
import type { GeminiErrorObject } from './gemini-api.js';
import { mapGeminiStreamError, parseGeminiError } from './map-gemini-error.js';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.js';
import { mapGeminiUsage, toUsage, type OpenAIUsageObject } from './map-gemini-usage.js';
import { generatedText, readGeminiCandidate } from './read-gemini-candidate.js';

/** The stream's last characters, kept to find an error body Google wrote into it without SSE framing. */
const TAIL_LENGTH = 8 * 1024;

interface CandidateState {
  roleSent: boolean;
  toolCalls: number;
  finishReason: string | null;
}

interface ChoiceDelta {
  index: number;
  delta: Record<string, unknown>;
  logprobs: null;
  finish_reason: string | null;
}

/**
 * Reads a Gemini `streamGenerateContent?alt=sse` body into OpenAI `chat.completion.chunk` events
 * as each Gemini event arrives. Finish reasons are held until the stream ends: Gemini may say STOP
 * in a chunk that more text follows (older models put it on every chunk), and a function call and
 * the STOP after it arrive in different events. Usage comes last, from the last `usageMetadata`.
 */
export class GeminiChatEvents implements EventReader<ChatStreamEvent> {
  /** Gemini has no last event: the stream ends when the upstream closes it. */
  readonly done = false;
  private id: string | null = null;
  private readonly created = Math.floor(Date.now() / 1000);
  private model: string;
  private readonly candidates = new Map<number, CandidateState>();
  private usage: OpenAIUsageObject | null = null;
  private blocked = false;
  private readonly utf8 = new TextDecoder();
  /** The stream's last characters, to find an error body Google wrote into it without SSE framing. */
  private tail = '';
  /** The usage chunk, owed after the finish chunk. */
  private owed: ChatStreamEvent | undefined = undefined;

  constructor(
    private readonly upstreamId: string,
    requestedModel: string,
  ) {
    this.model = requestedModel;
  }

  received(chunk: Buffer): void {
    this.tail = (this.tail + this.utf8.decode(chunk, { stream: true })).slice(-TAIL_LENGTH);
  }

  /** One Gemini event as a chunk, or undefined when it carries nothing to show (only usage or a finish). */
  read({ data }: ServerSentEvent): ChatStreamEvent | undefined {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      throw new GatewayError('upstream_invalid_response', `Upstream ${this.upstreamId} sent a stream event that is not JSON.`);
    }
    if (!isGenerateContentResponse(parsed))
      throw new GatewayError('upstream_invalid_response', `Upstream ${this.upstreamId} sent a stream event that is not a GenerateContentResponse.`);
    const response = parsed;
    if (typeof response.error === 'object' && response.error !== null) throw mapGeminiStreamError(response.error, this.upstreamId);
    this.id ??= completionId(response.responseId);
    if (typeof response.modelVersion === 'string') this.model = response.modelVersion;
    this.usage = mapGeminiUsage(response.usageMetadata) ?? this.usage;
    if (response.promptFeedback?.blockReason) this.blocked = true;

    const choices: ChoiceDelta[] = [];
    let text = '';
    (response.candidates ?? []).forEach((candidate, position) => {
      const index = candidate.index ?? position;
      const state = this.candidateState(index);
      if (candidate.finishReason) state.finishReason = candidate.finishReason;
      const output = readGeminiCandidate(candidate);
      if (output.text === '' && output.toolCalls.length === 0) return;
      const delta: Record<string, unknown> = {};
      if (!state.roleSent) delta['role'] = 'assistant';
      state.roleSent = true;
      if (output.text !== '') delta['content'] = output.text;
      if (output.toolCalls.length > 0) {
        // Gemini sends each call whole, so each is one OpenAI tool-call delta with its full arguments.
        delta['tool_calls'] = output.toolCalls.map((call) => ({ index: state.toolCalls++, ...call }));
      }
      text += generatedText(output);
      choices.push({ index, delta, logprobs: null, finish_reason: null });
    });
    if (choices.length === 0) return undefined;
    return { data: JSON.stringify(this.chunk(choices)), usage: null, usageOnly: false, text };
  }

  /** The finish chunk (the usage chunk owed after it), once the upstream has closed the stream. */
  end(): ChatStreamEvent {
    const finished = [...this.candidates.values()].some((state) => state.finishReason !== null);
    if (!finished && !this.blocked) {
      const error = unframedError(this.tail);
      if (error !== null) throw mapGeminiStreamError(error, this.upstreamId);
      throw new GatewayError('upstream_error', `Upstream ${this.upstreamId} ended the stream before it finished.`);
    }
    this.id ??= completionId(undefined);
    if (this.candidates.size === 0) this.candidateState(0);
    const choices: ChoiceDelta[] = [...this.candidates.entries()]
      .sort(([left], [right]) => left - right)
      .map(([index, state]) => ({
        index,
        delta: state.roleSent ? {} : { role: 'assistant' },
        logprobs: null,
        finish_reason: this.blocked && state.finishReason === null ? 'content_filter' : mapGeminiFinishReason(state.finishReason, state.toolCalls > 0),
      }));
    const finish: ChatStreamEvent = { data: JSON.stringify(this.chunk(choices)), usage: null, usageOnly: false, text: '' };
    if (this.usage !== null)
      this.owed = { data: JSON.stringify({ ...this.chunk([]), usage: this.usage }), usage: toUsage(this.usage), usageOnly: true, text: '' };
    return finish;
  }

  more(): ChatStreamEvent | undefined {
    const owed = this.owed;
    this.owed = undefined;
    return owed;
  }

  private candidateState(index: number): CandidateState {
    let state = this.candidates.get(index);
    if (state === undefined) {
      state = { roleSent: false, toolCalls: 0, finishReason: null };
      this.candidates.set(index, state);
    }
    return state;
  }

  private chunk(choices: ChoiceDelta[]) {
    return { id: this.id ?? completionId(undefined), object: 'chat.completion.chunk', created: this.created, model: this.model, choices };
  }
}

/**
 * An error body at the end of the stream that was not an SSE event (Google's own SDK checks raw
 * chunks for one): the JSON object holding the last `"error"` key, alone or in an array.
 */
function unframedError(tail: string): GeminiErrorObject | null {
  const key = tail.lastIndexOf('"error"');
  if (key === -1) return null;
  const start = tail.lastIndexOf('{', key);
  if (start === -1) return null;
  const bracket = tail.lastIndexOf('[', start);
  const wrapped = bracket !== -1 && tail.slice(bracket + 1, start).trim() === '' ? parseGeminiError(tail.slice(bracket).trim()) : null;
  return wrapped ?? parseGeminiError(tail.slice(start).trim());
}
