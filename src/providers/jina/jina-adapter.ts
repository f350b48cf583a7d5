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
import { convertJinaEmbeddingsRequest, convertJinaRerankRequest } from './convert-jina-request.js';
import { DEFAULT_JINA_BASE_URL, JINA_EMBEDDING_LIMITS, type JinaEmbeddingsResponse, type JinaRerankResponse } from './jina-api.js';
import { mapJinaError } from './map-jina-error.js';
import { mapJinaEmbeddingsResponse, mapJinaRerankResponse } from './map-jina-response.js';
import { EMBEDDING_UPSTREAM_KEYS, readUpstreamKeys } from '../shared/upstream-keys.js';

/** Jina AI's embeddings and rerank API. Chat through Jina is not served by this adapter. */
export class JinaAdapter implements ProviderAdapter, EmbeddingProvider, RerankProvider {
  readonly endpoint: string;
  readonly capabilities: Capabilities = { embedding: this, rerank: this };
  readonly embeddingLimits: EmbeddingLimits;
  private readonly http: JsonUpstream;

  constructor(endpoint: EndpointConfig) {
    this.endpoint = endpoint.name;
    this.embeddingLimits = { ...JINA_EMBEDDING_LIMITS, maxInputs: readUpstreamKeys(endpoint, EMBEDDING_UPSTREAM_KEYS).max_embedding_inputs ?? JINA_EMBEDDING_LIMITS.maxInputs };
    this.http = new JsonUpstream(endpoint.base_url ?? DEFAULT_JINA_BASE_URL, endpoint, mapJinaError);
  }

  async embed(attempt: Attempt, call: EmbeddingCall): Promise<EmbeddingResult> {
    const response = await this.http.post<JinaEmbeddingsResponse>(attempt, '/embeddings', convertJinaEmbeddingsRequest(call), call.cancellation);
    return mapJinaEmbeddingsResponse(response, call.inputs.length, attempt.credential.id);
  }

  async rerank(attempt: Attempt, call: RerankCall): Promise<RerankResult> {
    const response = await this.http.post<JinaRerankResponse>(attempt, '/rerank', convertJinaRerankRequest(call), call.cancellation);
    return mapJinaRerankResponse(response, attempt.credential.id);
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

export const createJinaAdapter: ProviderFactory = (endpoint) => new JinaAdapter(endpoint);
