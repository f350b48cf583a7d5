import { GatewayError } from '../../errors/index.js';
import type { Usage } from '../../core/index.js';
import type {
  ChatCompletionChunk,
  ChatCompletionPayload,
  ChatCompletionResult,
  ChatFinishReason,
  ChatStreamEvent,
  ChatToolCall,
  ChatUsage,
} from '../openai-chat/chat-types.js';

/**
 * A whole `chat.completion` from the chunks of responses-chat-chunks.ts: the backend only streams,
 * so a caller that did not ask for a stream is answered once the stream is over. Content and tool
 * call arguments are joined in order; a failure of the stream rejects, as the stream threw it.
 */
export async function collectChatCompletion(events: AsyncIterable<ChatStreamEvent>): Promise<ChatCompletionResult> {
  const completion = new CompletionBuilder();
  for await (const event of events) completion.add(event);
  const payload = completion.payload();
  return {
    payload: Buffer.from(JSON.stringify(payload)),
    usage: completion.usage,
    completionText: () => completionText(payload),
  };
}

class CompletionBuilder {
  usage: Usage | null = null;
  private chunk: ChatCompletionChunk | null = null;
  private content: string[] = [];
  private refusal: string[] = [];
  private readonly toolCalls = new Map<number, ChatToolCall>();
  private finishReason: ChatFinishReason | null = null;
  private chatUsage: ChatUsage | undefined;

  add(event: ChatStreamEvent): void {
    // The chunks are this gateway's own JSON (responses-chat-chunks.ts), not the upstream's.
    const chunk = JSON.parse(event.data) as ChatCompletionChunk;
    this.chunk ??= chunk;
    if (event.usage !== null) this.usage = event.usage;
    if (chunk.usage !== undefined) this.chatUsage = chunk.usage;
    for (const choice of chunk.choices) {
      const { delta } = choice;
      if (delta.content !== undefined && delta.content !== '') this.content.push(delta.content);
      if (delta.refusal !== undefined && delta.refusal !== '') this.refusal.push(delta.refusal);
      for (const call of delta.tool_calls ?? []) {
        let assembled = this.toolCalls.get(call.index);
        if (assembled === undefined) {
          assembled = { id: '', type: 'function', function: { name: '', arguments: '' } };
          this.toolCalls.set(call.index, assembled);
        }
        if (call.id !== undefined) assembled.id = call.id;
        if (call.function.name !== undefined) assembled.function.name = call.function.name;
        assembled.function.arguments += call.function.arguments;
      }
      if (choice.finish_reason !== null) this.finishReason = choice.finish_reason;
    }
  }

  payload(): ChatCompletionPayload {
    if (this.chunk === null || this.finishReason === null) {
      throw new GatewayError('upstream_invalid_response', 'The upstream stream ended without finishing its completion.');
    }
    const toolCalls = [...this.toolCalls.entries()].sort(([left], [right]) => left - right).map(([, call]) => call);
    return {
      id: this.chunk.id,
      object: 'chat.completion',
      created: this.chunk.created,
      model: this.chunk.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            // OpenAI answers null content when the model only called tools (or only refused).
            content: this.content.length > 0 ? this.content.join('') : null,
            refusal: this.refusal.length > 0 ? this.refusal.join('') : null,
            ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          },
          logprobs: null,
          finish_reason: this.finishReason,
        },
      ],
      ...(this.chatUsage === undefined ? {} : { usage: this.chatUsage }),
    };
  }
}

/** The generated text, tool names and arguments included: all of it is billed as output. */
function completionText(payload: ChatCompletionPayload): string {
  let text = '';
  for (const { message } of payload.choices) {
    text += (message.content ?? '') + (message.refusal ?? '');
    for (const call of message.tool_calls ?? []) text += call.function.name + call.function.arguments;
  }
  return text;
}
