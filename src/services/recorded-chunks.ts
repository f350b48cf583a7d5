import type { ChatRequestBody, ChatStreamEvent } from '../providers/provider-adapter.js';
import { estimateChatUsage, type RequestRecord } from '../usage/index.js';

/**
 * A chat stream's chunks (the first already read with peekFirst), parsed, for a converter to
 * another protocol: usage and generated text are noted on the record as they pass, as chat does,
 * and usage is estimated from the text (and `chat`, the request the upstream got) when none came.
 */
export async function* recordedChunks(events: AsyncIterator<ChatStreamEvent>, chat: ChatRequestBody, record: RequestRecord): AsyncGenerator<unknown> {
  let text = '';
  record.estimateUsage = () => estimateChatUsage(chat, text);
  try {
    for (let next = await events.next(); next.done !== true; next = await events.next()) {
      const event = next.value;
      if (event.usage !== null) record.usage = event.usage;
      text += event.text;
      yield JSON.parse(event.data) as unknown;
    }
  } finally {
    await events.return?.();
  }
}
