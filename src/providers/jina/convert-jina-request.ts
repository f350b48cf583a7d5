import { GatewayError } from '../../errors/index.js';
import type { EmbeddingCall, RerankCall } from '../provider-adapter.js';
import type { JinaEmbeddingsRequest, JinaRerankRequest } from './jina-api.js';

export function convertJinaEmbeddingsRequest(call: EmbeddingCall): JinaEmbeddingsRequest {
  const input = call.inputs.map((item) => {
    // Jina's `input` takes text (or image/document objects), never token ids.
    if (typeof item !== 'string') {
      throw new GatewayError('upstream_bad_request', 'This model (served by Jina) accepts only strings as embedding input, not token arrays.', {
        param: 'input',
      });
    }
    return item;
  });
  return {
    model: call.model,
    input,
    ...(call.dimensions === undefined ? {} : { dimensions: call.dimensions }),
    // Floats always; the gateway converts to base64 for clients that asked for it.
    embedding_type: 'float',
  };
}

export function convertJinaRerankRequest(call: RerankCall): JinaRerankRequest {
  return {
    model: call.model,
    query: call.query,
    documents: [...call.documents],
    ...(call.topN === undefined ? {} : { top_n: call.topN }),
    return_documents: false,
  };
}
