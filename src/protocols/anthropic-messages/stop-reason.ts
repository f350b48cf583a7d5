import type { ChatFinishReason } from '../openai-chat/chat-types.js';
import type { MessagesStopReason } from './messages-types.js';

/**
 * Anthropic's `stop_reason` as OpenAI's `finish_reason`. `pause_turn` (a server tool paused a long
 * turn) ends this response normally, so it is `stop`; reasons Anthropic adds later are too.
 */
export function mapAnthropicFinishReason(stopReason: string | null | undefined): ChatFinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/**
 * A chat `finish_reason` as Anthropic's `stop_reason`. Chat does not say which stop sequence
 * matched, so a stop is `end_turn`; a reason chat adds later is too.
 */
export function stopReasonOf(finishReason: string | null | undefined): MessagesStopReason {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}
