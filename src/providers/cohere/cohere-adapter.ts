import type { EndpointConfig } from '../../config/index.js';
import type {
  Attempt,
  Capabilities,
  EmbeddingCall,
  EmbeddingLimits,
  EmbeddingProvider,
  EmbeddingResult,
  ProviderAdapter,
  ProviderFactory,
  RerankCall,
  RerankProvider,
  RerankResult,
} from '../provider-adapter.js';
import { JsonUpstream } from '../shared/json-upstream.js';
import { COHERE_EMBEDDING_LIMITS, DEFAULT_COHERE_BASE_URL, type CohereEmbedResponse, type CohereRerankResponse } from './cohere-api.js';
import { convertCohereEmbedRequest, convertCohereRerankRequest } from './convert-cohere-request.js';
import { mapCohereError } from './map-cohere-error.js';
import { mapCohereEmbedResponse, mapCohereRerankResponse } from './map-cohere-response.js';
import { EMBEDDING_UPSTREAM_KEYS, readUpstreamKeys } from '../shared/upstream-keys.js';

/** Cohere's v2 API for embeddings and rerank. Chat through Cohere is not served by this adapter. */
export class CohereAdapter implements ProviderAdapter, EmbeddingProvider, RerankProvider {
  readonly endpoint: string;
  readonly capabilities: Capabilities = { embedding: this, rerank: this };
  readonly embeddingLimits: EmbeddingLimits;
  private readonly http: JsonUpstream;

  constructor(endpoint: EndpointConfig) {
    this.endpoint = endpoint.name;
    this.embeddingLimits = { ...COHERE_EMBEDDING_LIMITS, maxInputs: readUpstreamKeys(endpoint, EMBEDDING_UPSTREAM_KEYS).max_embedding_inputs ?? COHERE_EMBEDDING_LIMITS.maxInputs };
    this.http = new JsonUpstream(endpoint.base_url ?? DEFAULT_COHERE_BASE_URL, endpoint, mapCohereError);
  }

  async embed(attempt: Attempt, call: EmbeddingCall): Promise<EmbeddingResult> {
    const response = await this.http.post<CohereEmbedResponse>(attempt, '/v2/embed', convertCohereEmbedRequest(call), call.cancellation);
    return mapCohereEmbedResponse(response, call.inputs.length, attempt.credential.id);
  }

  async rerank(attempt: Attempt, call: RerankCall): Promise<RerankResult> {
    const response = await this.http.post<CohereRerankResponse>(attempt, '/v2/rerank', convertCohereRerankRequest(call), call.cancellation);
    return mapCohereRerankResponse(response, attempt.credential.id);
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

export const createCohereAdapter: ProviderFactory = (endpoint) => new CohereAdapter(endpoint);
