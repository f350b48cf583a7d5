import type { ProviderFactory } from '../provider-adapter.js';
import { EmbedRerankAdapter, type EmbedRerankApi } from '../shared/embed-rerank-adapter.js';
import { COHERE_EMBEDDING_LIMITS, DEFAULT_COHERE_BASE_URL, type CohereEmbedResponse, type CohereRerankResponse } from './cohere-api.js';
import { convertCohereEmbedRequest, convertCohereRerankRequest } from './convert-cohere-request.js';
import { cohereErrorDialect } from './map-cohere-error.js';
import { mapCohereEmbedResponse, mapCohereRerankResponse } from './map-cohere-response.js';

/** Cohere's v2 API for embeddings and rerank. Chat through Cohere is not served by this adapter. */
export const COHERE_API: EmbedRerankApi<CohereEmbedResponse, CohereRerankResponse> = {
  defaultBaseUrl: DEFAULT_COHERE_BASE_URL,
  embeddingLimits: COHERE_EMBEDDING_LIMITS,
  dialect: cohereErrorDialect,
  embed: {
    path: '/v2/embed',
    convert: convertCohereEmbedRequest,
    map: (answer, call, credentialId) => mapCohereEmbedResponse(answer, call.inputs.length, credentialId),
  },
  rerank: { path: '/v2/rerank', convert: convertCohereRerankRequest, map: (answer, _call, credentialId) => mapCohereRerankResponse(answer, credentialId) },
};

export const createCohereAdapter: ProviderFactory = (endpoint) => new EmbedRerankAdapter(endpoint, COHERE_API);
