import type { UpstreamConfig } from '../../config/index.js';
import type {
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
import { bearerHeaders, JsonUpstream } from '../shared/json-upstream.js';
import { COHERE_EMBEDDING_LIMITS, DEFAULT_COHERE_BASE_URL, type CohereEmbedResponse, type CohereRerankResponse } from './cohere-api.js';
import { convertCohereEmbedRequest, convertCohereRerankRequest } from './convert-cohere-request.js';
import { mapCohereError } from './map-cohere-error.js';
import { mapCohereEmbedResponse, mapCohereRerankResponse } from './map-cohere-response.js';
import { EMBEDDING_UPSTREAM_KEYS, readUpstreamKeys } from '../shared/upstream-keys.js';

/** Cohere's v2 API for embeddings and rerank. Chat through Cohere is not served by this adapter. */
export class CohereAdapter implements ProviderAdapter, EmbeddingProvider, RerankProvider {
  readonly upstreamId: string;
  readonly capabilities: Capabilities = { embedding: this, rerank: this };
  readonly embeddingLimits: EmbeddingLimits;
  private readonly http: JsonUpstream;

  constructor(upstream: UpstreamConfig) {
    this.upstreamId = upstream.id;
    this.embeddingLimits = { ...COHERE_EMBEDDING_LIMITS, maxInputs: readUpstreamKeys(upstream, EMBEDDING_UPSTREAM_KEYS).max_embedding_inputs ?? COHERE_EMBEDDING_LIMITS.maxInputs };
    this.http = new JsonUpstream(upstream.base_url ?? DEFAULT_COHERE_BASE_URL, upstream, bearerHeaders(upstream), mapCohereError);
  }

  async embed(call: EmbeddingCall): Promise<EmbeddingResult> {
    const response = await this.http.post<CohereEmbedResponse>('/v2/embed', convertCohereEmbedRequest(call), call.cancellation);
    return mapCohereEmbedResponse(response, call.inputs.length, this.upstreamId);
  }

  async rerank(call: RerankCall): Promise<RerankResult> {
    const response = await this.http.post<CohereRerankResponse>('/v2/rerank', convertCohereRerankRequest(call), call.cancellation);
    return mapCohereRerankResponse(response, this.upstreamId);
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

export const createCohereAdapter: ProviderFactory = (upstream) => new CohereAdapter(upstream);
