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
import { convertJinaEmbeddingsRequest, convertJinaRerankRequest } from './convert-jina-request.js';
import { DEFAULT_JINA_BASE_URL, JINA_EMBEDDING_LIMITS, type JinaEmbeddingsResponse, type JinaRerankResponse } from './jina-api.js';
import { mapJinaError } from './map-jina-error.js';
import { mapJinaEmbeddingsResponse, mapJinaRerankResponse } from './map-jina-response.js';
import { EMBEDDING_UPSTREAM_KEYS, readUpstreamKeys } from '../shared/upstream-keys.js';

/** Jina AI's embeddings and rerank API. Chat through Jina is not served by this adapter. */
export class JinaAdapter implements ProviderAdapter, EmbeddingProvider, RerankProvider {
  readonly upstreamId: string;
  readonly capabilities: Capabilities = { embedding: this, rerank: this };
  readonly embeddingLimits: EmbeddingLimits;
  private readonly http: JsonUpstream;

  constructor(upstream: UpstreamConfig) {
    this.upstreamId = upstream.id;
    this.embeddingLimits = { ...JINA_EMBEDDING_LIMITS, maxInputs: readUpstreamKeys(upstream, EMBEDDING_UPSTREAM_KEYS).max_embedding_inputs ?? JINA_EMBEDDING_LIMITS.maxInputs };
    this.http = new JsonUpstream(upstream.base_url ?? DEFAULT_JINA_BASE_URL, upstream, bearerHeaders(upstream), mapJinaError);
  }

  async embed(call: EmbeddingCall): Promise<EmbeddingResult> {
    const response = await this.http.post<JinaEmbeddingsResponse>('/embeddings', convertJinaEmbeddingsRequest(call), call.cancellation);
    return mapJinaEmbeddingsResponse(response, call.inputs.length, this.upstreamId);
  }

  async rerank(call: RerankCall): Promise<RerankResult> {
    const response = await this.http.post<JinaRerankResponse>('/rerank', convertJinaRerankRequest(call), call.cancellation);
    return mapJinaRerankResponse(response, this.upstreamId);
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

export const createJinaAdapter: ProviderFactory = (upstream) => new JinaAdapter(upstream);
