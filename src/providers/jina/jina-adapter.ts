import type { ProviderFactory } from '../provider-adapter.js';
import { EmbedRerankAdapter, type EmbedRerankApi } from '../shared/embed-rerank-adapter.js';
import { convertJinaEmbeddingsRequest, convertJinaRerankRequest } from './convert-jina-request.js';
import { DEFAULT_JINA_BASE_URL, JINA_EMBEDDING_LIMITS, type JinaEmbeddingsResponse, type JinaRerankResponse } from './jina-api.js';
import { jinaErrorDialect } from './map-jina-error.js';
import { mapJinaEmbeddingsResponse, mapJinaRerankResponse } from './map-jina-response.js';

/** Jina AI's embeddings and rerank API. Chat through Jina is not served by this adapter. */
export const JINA_API: EmbedRerankApi<JinaEmbeddingsResponse, JinaRerankResponse> = {
  defaultBaseUrl: DEFAULT_JINA_BASE_URL,
  embeddingLimits: JINA_EMBEDDING_LIMITS,
  dialect: jinaErrorDialect,
  embed: {
    path: '/embeddings',
    convert: convertJinaEmbeddingsRequest,
    map: (answer, call, credentialId) => mapJinaEmbeddingsResponse(answer, call.inputs.length, credentialId),
  },
  rerank: { path: '/rerank', convert: convertJinaRerankRequest, map: (answer, _call, credentialId) => mapJinaRerankResponse(answer, credentialId) },
};

export const createJinaAdapter: ProviderFactory = (endpoint) => new EmbedRerankAdapter(endpoint, JINA_API);
