import { GatewayError } from '../../errors/index.js';
import type { EmbeddingCall, RerankCall } from '../provider-adapter.js';
import type { CohereEmbedRequest, CohereRerankRequest } from './cohere-api.js';

export function convertCohereEmbedRequest(call: EmbeddingCall): CohereEmbedRequest {
  const texts = call.inputs.map((input) => {
    // Cohere embeds text only; token ids from another tokenizer would mean nothing to it.
    if (typeof input !== 'string') {
      throw new GatewayError('upstream_bad_request', 'This model (served by Cohere) accepts only strings as embedding input, not token arrays.', {
        param: 'input',
      });
    }
    return input;
  });
  return {
    model: call.model,
    texts,
    input_type: 'search_document',
    // Floats always: the gateway converts to base64 itself, and float is the one type every Cohere model serves.
    embedding_types: ['float'],
    ...(call.dimensions === undefined ? {} : { output_dimension: call.dimensions }),
  };
}

export function convertCohereRerankRequest(call: RerankCall): CohereRerankRequest {
  return {
    model: call.model,
    query: call.query,
    documents: [...call.documents],
    ...(call.topN === undefined ? {} : { top_n: call.topN }),
  };
}
