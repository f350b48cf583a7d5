import type { ProviderFactory } from '../provider-adapter.js';
import { EmbedRerankAdapter, type EmbedRerankApi } from '../shared/embed-rerank-adapter.js';
import { convertTeiEmbedRequest, convertTeiRerankRequest } from './convert-tei-request.js';
import { teiErrorDialect } from './map-tei-error.js';
import { mapTeiEmbedResponse, mapTeiRerankResponse } from './map-tei-response.js';
import { TEI_EMBEDDING_LIMITS, type TeiEmbedResponse, type TeiRerankResponse } from './tei-api.js';

/**
 * A self-hosted Hugging Face text-embeddings-inference server, through its native `/embed` and
 * `/rerank`. It has no chat. `api_key` is optional: TEI checks a Bearer token only when started
 * with `--api-key`. `base_url` is required (checked with the config): there is no address to default to.
 */
export const TEI_API: EmbedRerankApi<TeiEmbedResponse, TeiRerankResponse> = {
  defaultBaseUrl: null,
  embeddingLimits: TEI_EMBEDDING_LIMITS,
  dialect: teiErrorDialect,
  embed: {
    path: '/embed',
    convert: convertTeiEmbedRequest,
    map: (answer, call, credentialId) => mapTeiEmbedResponse(answer, call.inputs.length, credentialId),
  },
  rerank: { path: '/rerank', convert: convertTeiRerankRequest, map: (answer, _call, credentialId) => mapTeiRerankResponse(answer, credentialId) },
};

export const createTeiAdapter: ProviderFactory = (endpoint) => new EmbedRerankAdapter(endpoint, TEI_API);
