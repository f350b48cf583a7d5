import type { ResponsesEventBytes } from '../../providers/provider-adapter.js';
import type { RequestRecord } from '../../usage/index.js';

/**
 * An upstream's Responses stream (`body`: `result.body`, its first chunk already read with
 * peekFirst), passed on byte for byte.
 * The response's id is told as soon as the upstream's events have named it (so that it is
 * remembered long before the client can continue it); its usage goes on the record when the
 * stream ends, however it ends.
 */
export async function* passedThroughBytes(
  body: AsyncIterator<Buffer>,
  result: ResponsesEventBytes,
  record: RequestRecord,
  onResponseId: (id: string) => void,
): AsyncGenerator<Buffer> {
  let named = false;
  const noteId = (): void => {
    if (named) return;
    const id = result.responseId();
    if (id === null) return;
    named = true;
    onResponseId(id);
  };
  try {
    for (let next = await body.next(); next.done !== true; next = await body.next()) {
      noteId();
      yield next.value;
    }
    noteId();
  } finally {
    record.usage = result.usage();
    await body.return?.();
  }
}
