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
import { convertTeiEmbedRequest, convertTeiRerankRequest } from './convert-tei-request.js';
import { mapTeiError } from './map-tei-error.js';
import { mapTeiEmbedResponse, mapTeiRerankResponse } from './map-tei-response.js';
import { TEI_EMBEDDING_LIMITS, type TeiEmbedResponse, type TeiRerankResponse } from './tei-api.js';
import { EMBEDDING_UPSTREAM_KEYS, readUpstreamKeys } from '../shared/upstream-keys.js';

/**
 * A self-hosted Hugging Face text-embeddings-inference server, through its native `/embed` and
 * `/rerank`. It has no chat. `api_key` is optional: TEI checks a Bearer token only when started
 * with `--api-key`. `base_url` is required (checked with the config): there is no address to default to.
 */
export class TeiAdapter implements ProviderAdapter, EmbeddingProvider, RerankProvider {
  readonly upstreamId: string;
  readonly capabilities: Capabilities = { embedding: this, rerank: this };
  readonly embeddingLimits: EmbeddingLimits;
  private readonly http: JsonUpstream;

  constructor(upstream: UpstreamConfig) {
    if (upstream.base_url === undefined) throw new Error(`upstream ${upstream.id}: tei needs base_url`);
    this.upstreamId = upstream.id;
    this.embeddingLimits = { ...TEI_EMBEDDING_LIMITS, maxInputs: readUpstreamKeys(upstream, EMBEDDING_UPSTREAM_KEYS).max_embedding_inputs ?? TEI_EMBEDDING_LIMITS.maxInputs };
    this.http = new JsonUpstream(upstream.base_url, upstream, bearerHeaders(upstream), mapTeiError);
  }

  async embed(call: EmbeddingCall): Promise<EmbeddingResult> {
    const response = await this.http.post<TeiEmbedResponse>('/embed', convertTeiEmbedRequest(call), call.cancellation);
    return mapTeiEmbedResponse(response, call.inputs.length, this.upstreamId);
  }

  async rerank(call: RerankCall): Promise<RerankResult> {
    const response = await this.http.post<TeiRerankResponse>('/rerank', convertTeiRerankRequest(call), call.cancellation);
    return mapTeiRerankResponse(response, this.upstreamId);
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

export const createTeiAdapter: ProviderFactory = (upstream) => new TeiAdapter(upstream);
