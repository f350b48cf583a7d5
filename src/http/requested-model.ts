import type { RequestRecord } from '../usage/index.js';

/** Longer than any model id a config could hold: such a value is not kept in the log's model column. */
const MAX_MODEL_LENGTH = 256;

/**
 * Notes the model a request names on its log record as soon as the body is read, whether or not
 * it exists: a request refused before routing (404 unknown model, 403 not allowed, 422) is then
 * found by the request log's model filter like the ones served. The service sets the same id again
 * once it has resolved the model.
 */
export function noteRequestedModel(record: RequestRecord | null, body: unknown): void {
  if (record === null || typeof body !== 'object' || body === null) return;
  const model = (body as { model?: unknown }).model;
  if (typeof model === 'string' && model !== '' && model.length <= MAX_MODEL_LENGTH) record.model = model;
}
