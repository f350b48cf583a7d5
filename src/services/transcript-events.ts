import type { TranscriptionResult } from '../providers/provider-adapter.js';

/**
 * A whole transcript as OpenAI's transcript stream: the text in one `transcript.text.delta`
 * (none when it is empty), then `transcript.text.done` with the text and, when the upstream
 * counted tokens, its usage. For upstreams and engines that do not stream (whisper-1, the local
 * engine, other providers), so that a client asking for a stream always gets one.
 */
export async function* transcriptEvents(result: TranscriptionResult): AsyncGenerator<Buffer> {
  const { text, usage } = readTranscript(result);
  if (text !== '') yield event({ type: 'transcript.text.delta', delta: text });
  yield event(usage === undefined ? { type: 'transcript.text.done', text } : { type: 'transcript.text.done', text, usage });
}

function event(data: Record<string, unknown>): Buffer {
  return Buffer.from(`data: ${JSON.stringify(data)}\n\n`, 'utf8');
}

/** The text of a `json` answer (`{"text": …}`) or a `text` one (the text and a final newline). */
function readTranscript(result: TranscriptionResult): { text: string; usage?: unknown } {
  const body = result.body.toString('utf8');
  if (!/\bjson\b/i.test(result.contentType)) return { text: body.replace(/\r?\n$/, '') };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { text: body };
  }
  if (typeof parsed !== 'object' || parsed === null) return { text: '' };
  const { text, usage } = parsed as { text?: unknown; usage?: { type?: unknown } };
  // The done event's usage counts tokens; whisper-1's counts seconds, which it has no field for.
  return { text: typeof text === 'string' ? text : '', ...(usage?.type === 'tokens' ? { usage } : {}) };
}
