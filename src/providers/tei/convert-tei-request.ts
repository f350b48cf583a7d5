import type { EmbeddingCall, RerankCall } from '../provider-adapter.js';
import type { TeiEmbedRequest, TeiRerankRequest } from './tei-api.js';

export function convertTeiEmbedRequest(call: EmbeddingCall): TeiEmbedRequest {
  return {
    // TEI takes token ids as well as text; ids pass through unchanged, as OpenAI's API does.
    inputs: call.inputs.map((input) => (typeof input === 'string' ? input : [...input])),
    normalize: true,
    ...(call.dimensions === undefined ? {} : { dimensions: call.dimensions }),
  };
}

/** TEI scores every text and has no `top_n`: the gateway cuts the sorted list itself. */
export function convertTeiRerankRequest(call: RerankCall): TeiRerankRequest {
  return { query: call.query, texts: [...call.documents], return_text: false, raw_scores: false };
}
