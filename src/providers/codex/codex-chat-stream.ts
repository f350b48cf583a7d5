import { isObject, parseJson } from '../../core/index.js';
import { ResponsesChatConverter } from '../../protocols/openai-responses/responses-chat-chunks.js';
import type { ResponseStreamEvent } from '../../protocols/openai-responses/responses-types.js';
import type { ChatStreamEvent } from '../provider-adapter.js';
import { readEvents, type EventReader } from '../shared/read-events.js';
import type { ServerSentEvent } from '../shared/server-sent-events.js';
import { protocolFailure, streamFailure } from './codex-stream-failure.js';

export interface ResponsesChatStreamContext {
  /** The credential's id, for errors and the failure the router reads. */
  upstreamId: string;
  /** The chunks' `model`. */
  model: string;
  maxEventBytes?: number;
  /** The chunks' `created` (unix seconds); else the response's own, else now. */
  created?: number;
}

/**
 * The backend's Responses events, parsed, up to the one that ends the response
 * (`response.completed` or `.incomplete`). A failure it reports in the stream (`response.failed`,
 * `error`) is thrown classified (codex-stream-failure.ts), as is a stream cut before its end.
 */
export class CodexResponseEvents implements EventReader<ResponseStreamEvent> {
  done = false;

  constructor(private readonly upstreamId: string) {}

  read(event: ServerSentEvent): ResponseStreamEvent | undefined {
    // Not the backend's, but what relays in front of it end a stream with.
    if (event.data === '[DONE]') return undefined;
    const parsed = parseJson(event.data);
    if (parsed === undefined) throw protocolFailure(this.upstreamId, 'a stream event is not JSON');
    if (!isObject(parsed) || typeof parsed['type'] !== 'string') throw protocolFailure(this.upstreamId, 'a stream event is not a typed JSON object');
    const typed = parsed as unknown as ResponseStreamEvent;
    if (typed.type === 'response.failed') throw streamFailure(typed.response?.error, this.upstreamId, 'the response failed');
    if (typed.type === 'error') throw streamFailure(isObject(typed.error) ? typed.error : typed, this.upstreamId, 'the stream reported an error');
    this.done = typed.type === 'response.completed' || typed.type === 'response.incomplete';
    return typed;
  }

  end(): undefined {
    throw protocolFailure(this.upstreamId, 'the stream ended before response.completed');
  }
}

/**
 * The backend's Responses events as `chat.completion.chunk` events, as they arrive: each event
 * read by CodexResponseEvents, then converted by the protocol (responses-chat-chunks.ts), which
 * may make several chunks of one event.
 */
export class CodexChatEvents implements EventReader<ChatStreamEvent> {
  private readonly events: CodexResponseEvents;
  private readonly converter: ResponsesChatConverter;
  private readonly queue: ChatStreamEvent[] = [];

  constructor(context: ResponsesChatStreamContext) {
    this.events = new CodexResponseEvents(context.upstreamId);
    this.converter = new ResponsesChatConverter({
      model: context.model,
      ...(context.created === undefined ? {} : { created: context.created }),
      failed: (error, fallback) => streamFailure(error, context.upstreamId, fallback),
    });
  }

  get done(): boolean {
    return this.converter.finished;
  }

  read(event: ServerSentEvent): ChatStreamEvent | undefined {
    const parsed = this.events.read(event);
    if (parsed === undefined) return undefined;
    for (const chunk of this.converter.convert(parsed)) this.queue.push(chunk);
    return this.queue.shift();
  }

  more(): ChatStreamEvent | undefined {
    return this.queue.shift();
  }

  end(): undefined {
    return this.events.end();
  }
}

/** The backend's stream as chat chunks (CodexChatEvents over the one read loop, shared/read-events.ts). */
export function readResponsesAsChatStream(body: AsyncIterableIterator<Buffer>, context: ResponsesChatStreamContext): AsyncGenerator<ChatStreamEvent> {
  return readEvents(body, new CodexChatEvents(context), context.upstreamId, context.maxEventBytes);
}

/** The backend's stream as parsed Responses events (CodexResponseEvents over the one read loop). */
export function readResponseEvents(
  body: AsyncIterableIterator<Buffer>,
  context: Pick<ResponsesChatStreamContext, 'upstreamId' | 'maxEventBytes'>,
): AsyncGenerator<ResponseStreamEvent> {
  return readEvents(body, new CodexResponseEvents(context.upstreamId), context.upstreamId, context.maxEventBytes);
}
