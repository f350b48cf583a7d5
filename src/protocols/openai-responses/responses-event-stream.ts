import type { Usage } from '../../core/index.js';
import { GatewayError, isGatewayError } from '../../errors/index.js';
import type { ConvertedUsage } from './convert-chat-usage.js';
import { readChatChunks } from './read-chat-chunks.js';
import {
  createResponseObject,
  idMaker,
  toolNameFields,
  type IncompleteReason,
  type ResponseContext,
  type ResponseObject,
  type ResponseState,
} from './response-object.js';
import { responsesErrorEvent } from './responses-error-event.js';
import { StreamOutputItems, type OutputEvent } from './stream-output-items.js';

/** One server-sent event, for the edge to write as `event: <event>\ndata: <data>\n\n`. */
export interface ResponsesServerSentEvent {
  event: string;
  data: string;
}

/** What a reader notes besides the output items, for the final response. */
export interface StreamReadState {
  usage: ConvertedUsage | null;
  /** Set when the upstream said the answer was cut short; null: it completed. */
  incompleteReason: IncompleteReason | null;
  serviceTier: unknown;
}

/**
 * Reads one value of the upstream's stream (a parsed chat chunk, a Responses event) into the
 * items and the state; throws a failure the upstream reported in it.
 */
export type StreamReader = (value: unknown) => void;
export type StreamReaderFactory = (items: StreamOutputItems, state: StreamReadState) => StreamReader;

export interface ResponsesStreamResult {
  /** The last state of the response: completed, incomplete, failed, or still in progress if the stream was left early. */
  response: ResponseObject;
  /** The upstream's usage for the request record; null when it gave none (estimate it then). */
  usage: Usage | null;
  /** What ended the stream in failure, if anything did. */
  error?: unknown;
}

/**
 * Turns an upstream's stream (parsed `chat.completion.chunk` objects by default, or what another
 * reader reads: read-response-events.ts) into the Responses API's events:
 * `response.created`, `response.in_progress`, each output item's events (see
 * StreamOutputItems), then `response.completed` or `response.incomplete` with the whole response
 * and its usage. Every event carries a `sequence_number` counting from 0.
 *
 * Nothing is sent before the first chunk arrives, and a failure before it is thrown as is, so
 * the service can still try another route or answer with a plain JSON error. A failure after it
 * is sent in-band (`error`, then `response.failed`) and ends the stream; `result()` keeps it.
 */
export class ResponsesEventStream {
  private sequence = 0;
  private readonly queue: ResponsesServerSentEvent[] = [];
  private readonly items: StreamOutputItems;
  private readonly read: StreamReader;
  private readonly upstream: StreamReadState = { usage: null, incompleteReason: null, serviceTier: undefined };
  private state: ResponseState = { status: 'in_progress', output: [] };
  /** The response the last event carried, kept as sent (its completed_at included) for result(). */
  private final: ResponseObject | undefined;
  private error: unknown;

  /**
   * `toCaller` says a failure in the words a caller may see (the edge's mapping: upstream failures
   * name no credential, quoted keys are masked); without it a GatewayError is said as it is.
   */
  constructor(
    private readonly context: ResponseContext,
    private readonly toCaller?: (error: unknown) => GatewayError,
    reader: StreamReaderFactory = readChatChunks,
  ) {
    this.items = new StreamOutputItems(
      (event) => this.send(event),
      idMaker(context),
      (name) => toolNameFields(context, name),
    );
    this.read = reader(this.items, this.upstream);
  }

  async *events(chunks: AsyncIterable<unknown>): AsyncGenerator<ResponsesServerSentEvent> {
    const iterator = chunks[Symbol.asyncIterator]();
    let ended = false;
    try {
      let next = await iterator.next();
      this.send({ type: 'response.created', response: this.response() });
      this.send({ type: 'response.in_progress', response: this.response() });
      try {
        while (next.done !== true) {
          this.read(next.value);
          yield* this.drain();
          next = await iterator.next();
        }
        ended = true;
      } catch (error) {
        ended = true;
        yield* this.drain();
        yield* this.fail(error);
        return;
      }
      yield* this.drain();
      yield* this.complete();
    } finally {
      // A client that leaves early stops the upstream generating (and billing).
      if (!ended) await iterator.return?.();
    }
  }

  /** The events that end a stream in failure: OpenAI's `error` event (see responsesErrorEvent), then `response.failed`. */
  fail(error: unknown): ResponsesServerSentEvent[] {
    this.error = error;
    const known =
      this.toCaller?.(error) ??
      (isGatewayError(error) ? error : new GatewayError('internal_error', 'The gateway failed while streaming the response.', { cause: error }));
    this.send(responsesErrorEvent(known));
    this.state = {
      ...this.progress(),
      status: 'failed',
      error: { code: known.status === 429 ? 'rate_limit_exceeded' : 'server_error', message: known.message },
    };
    this.final = this.response();
    this.send({ type: 'response.failed', response: this.final });
    return this.drain();
  }

  result(): ResponsesStreamResult {
    const response = this.final ?? createResponseObject(this.context, this.progress());
    const result: ResponsesStreamResult = { response, usage: this.upstream.usage?.usage ?? null };
    if (this.error !== undefined) result.error = this.error;
    return result;
  }

  private complete(): ResponsesServerSentEvent[] {
    // A stream cut short throws in the chunk source, so one that ends without a finish_reason
    // ended normally (some servers leave it out).
    const { incompleteReason } = this.upstream;
    this.items.finish(incompleteReason);
    this.state = { ...this.progress(), status: incompleteReason === null ? 'completed' : 'incomplete', incompleteReason };
    this.final = this.response();
    this.send({ type: incompleteReason === null ? 'response.completed' : 'response.incomplete', response: this.final });
    return this.drain();
  }

  private progress(): ResponseState {
    return { status: 'in_progress', output: this.items.output(), usage: this.upstream.usage?.response ?? null, serviceTier: this.upstream.serviceTier };
  }

  private response(): ResponseObject {
    return createResponseObject(this.context, this.state);
  }

  private send(event: OutputEvent): void {
    const payload = { ...event, sequence_number: this.sequence };
    this.sequence += 1;
    this.queue.push({ event: event.type, data: JSON.stringify(payload) });
  }

  private drain(): ResponsesServerSentEvent[] {
    return this.queue.splice(0, this.queue.length);
  }
}
