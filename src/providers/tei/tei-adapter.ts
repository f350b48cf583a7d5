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
  readonly endpoint: string;
  readonly capabilities: Capabilities = { embedding: this, rerank: this };
  readonly embeddingLimits: EmbeddingLimits;
  private readonly http: JsonUpstream;

  constructor(endpoint: EndpointConfig) {
    if (endpoint.base_url === undefined) throw new Error(`${endpoint.name}: tei needs base_url`);
    this.endpoint = endpoint.name;
    this.embeddingLimits = { ...TEI_EMBEDDING_LIMITS, maxInputs: readUpstreamKeys(endpoint, EMBEDDING_UPSTREAM_KEYS).max_embedding_inputs ?? TEI_EMBEDDING_LIMITS.maxInputs };
    this.http = new JsonUpstream(endpoint.base_url, endpoint, mapTeiError);
  }

  async embed(attempt: Attempt, call: EmbeddingCall): Promise<EmbeddingResult> {
    const response = await this.http.post<TeiEmbedResponse>(attempt, '/embed', convertTeiEmbedRequest(call), call.cancellation);
    return mapTeiEmbedResponse(response, call.inputs.length, attempt.credential.id);
  }

  async rerank(attempt: Attempt, call: RerankCall): Promise<RerankResult> {
    const response = await this.http.post<TeiRerankResponse>(attempt, '/rerank', convertTeiRerankRequest(call), call.cancellation);
    return mapTeiRerankResponse(response, attempt.credential.id);
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

export const createTeiAdapter: ProviderFactory = (endpoint) => new TeiAdapter(endpoint);
