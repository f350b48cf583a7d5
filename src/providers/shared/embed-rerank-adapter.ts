import type { EndpointConfig } from '../../config/index.js';
import type {
  Attempt,
  Capabilities,
  EmbeddingCall,
  EmbeddingLimits,
  EmbeddingProvider,
  EmbeddingResult,
  ProviderAdapter,
  RerankCall,
  RerankProvider,
  RerankResult,
} from '../provider-adapter.js';
import type { ErrorDialect } from './classify-upstream-failure.js';
import { CredentialHeaders, bearerHeaders } from './credential-headers.js';
import { JSON_ANSWER } from './json-guard.js';
import { UpstreamClient } from './upstream-client.js';
import { EMBEDDING_UPSTREAM_KEYS, readUpstreamKeys } from './upstream-keys.js';

/** One JSON operation of an embeddings-and-rerank API: where it is, and its conversions both ways. */
export interface JsonOperation<Call, Answer, Result> {
  readonly path: string;
  convert(call: Call): unknown;
  map(answer: Answer, call: Call, credentialId: string): Result;
}

/**
 * What differs between the embeddings-and-rerank APIs (Cohere, Jina, text-embeddings-inference):
 * the default address, the limits, the error dialect and the two operations. The rest is this
 * adapter, once.
 */
export interface EmbedRerankApi<EmbedAnswer, RerankAnswer> {
  /** Its public address; null when there is none and `base_url` is required (TEI). */
  readonly defaultBaseUrl: string | null;
  readonly embeddingLimits: EmbeddingLimits;
  readonly dialect: ErrorDialect;
  readonly embed: JsonOperation<EmbeddingCall, EmbedAnswer, EmbeddingResult>;
  readonly rerank: JsonOperation<RerankCall, RerankAnswer, RerankResult>;
}

export class EmbedRerankAdapter<EmbedAnswer, RerankAnswer> implements ProviderAdapter, EmbeddingProvider, RerankProvider {
  readonly endpoint: string;
  readonly capabilities: Capabilities = { embedding: this, rerank: this };
  readonly embeddingLimits: EmbeddingLimits;
  private readonly client: UpstreamClient;
  private readonly headers = new CredentialHeaders(bearerHeaders);

  constructor(
    endpoint: EndpointConfig,
    private readonly api: EmbedRerankApi<EmbedAnswer, RerankAnswer>,
  ) {
    const baseUrl = endpoint.base_url ?? api.defaultBaseUrl;
    // Checked with the rest of the config (check-references); kept here for callers that skip it.
    if (baseUrl === null) throw new Error(`${endpoint.name}: ${endpoint.provider} needs base_url`);
    this.endpoint = endpoint.name;
    const maxInputs = readUpstreamKeys(endpoint, EMBEDDING_UPSTREAM_KEYS).max_embedding_inputs;
    this.embeddingLimits = { ...api.embeddingLimits, maxInputs: maxInputs ?? api.embeddingLimits.maxInputs };
    this.client = new UpstreamClient(baseUrl, endpoint);
  }

  embed(attempt: Attempt, call: EmbeddingCall): Promise<EmbeddingResult> {
    return this.call(attempt, this.api.embed, call, call.cancellation);
  }

  rerank(attempt: Attempt, call: RerankCall): Promise<RerankResult> {
    return this.call(attempt, this.api.rerank, call, call.cancellation);
  }

  close(): Promise<void> {
    return this.client.close();
  }

  /** Posts the converted call with the attempt's credential; the answer must be a JSON object or array, read by the operation. */
  private async call<Call, Answer, Result>(
    attempt: Attempt,
    operation: JsonOperation<Call, Answer, Result>,
    call: Call,
    cancellation: AbortSignal,
  ): Promise<Result> {
    const body = JSON.stringify(operation.convert(call));
    const answer = await this.client.postJson(
      { path: operation.path, method: 'POST', headers: this.headers.of(attempt.credential), body, cancellation, attempt },
      this.api.dialect,
      JSON_ANSWER,
    );
    return operation.map(answer.value as Answer, call, attempt.credential.id);
  }
}
