import { checkEmbeddingTokenLimits, type ParsedEmbeddingsRequest } from '../api/embeddings-request.js';
import type { Attempt, EmbeddingLimits, EncodingFormat } from '../providers/provider-adapter.js';
import { estimateEmbeddingTokens } from '../usage/index.js';
import { vectorFromBase64, vectorToBase64 } from './embedding-format.js';
import type { ModelCatalog, Route, Router } from '../routing/index.js';
import { resolveModel } from './resolve-model.js';
import { splitBatches } from './split-batches.js';
import { namedSession, routeRequest, type RoutedRequest } from './routed-request.js';

export interface EmbeddingInput extends RoutedRequest {
  parsed: ParsedEmbeddingsRequest;
}

/** The embedding list object of spec 2.3. */
export interface EmbeddingList {
  object: 'list';
  data: Array<{ object: 'embedding'; index: number; embedding: number[] | string }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

const UNLIMITED: EmbeddingLimits = { maxInputs: Number.MAX_SAFE_INTEGER, maxTokens: Number.MAX_SAFE_INTEGER };

/**
 * Embeddings: inputs are split into batches the model's upstreams accept, each batch is sent with
 * failover, and the vectors come back at their inputs' indexes in the format the client asked for.
 */
export class EmbeddingService {
  constructor(
    private readonly catalog: ModelCatalog,
    private readonly router: Router,
  ) {}

  async embed(input: EmbeddingInput): Promise<EmbeddingList> {
    const { principal, parsed, record, cancellation } = input;
    const { request, inputs } = parsed;
    const model = resolveModel(this.catalog, principal, request.model, 'embedding');
    record.model = model.id;
    await checkEmbeddingTokenLimits(parsed);
    const format: EncodingFormat = request.encoding_format ?? 'float';
    const batches = splitBatches(inputs, tightestLimits(model.routes));
    const session = namedSession(input, model);
    // Each batch is routed on its own: a large request spreads over the pool (a session keeps them on its credential).
    const results = await Promise.all(
      batches.map((batch) =>
        routeRequest(this.router, model, input, session, (route, attempt) =>
          embedWith(route, attempt, { inputs: batch.inputs, format, request: parsed.request, cancellation }),
        ),
      ),
    );
    const data: EmbeddingList['data'] = new Array(inputs.length);
    let promptTokens: number | null = 0;
    results.forEach(({ value }, batchIndex) => {
      const { start } = batches[batchIndex] as { start: number };
      value.vectors.forEach((vector, offset) => {
        data[start + offset] = { object: 'embedding', index: start + offset, embedding: inFormat(vector, format) };
      });
      promptTokens = promptTokens === null || value.promptTokens === null ? null : promptTokens + value.promptTokens;
    });
    // Upstreams that report no usage (TEI, for one) are counted here: the response must carry it.
    const tokens = promptTokens ?? (await estimateEmbeddingTokens(inputs));
    const usage = { promptTokens: tokens, completionTokens: 0, totalTokens: tokens };
    if (promptTokens === null) record.estimateUsage = async () => usage;
    else record.usage = usage;
    return { object: 'list', data, model: model.id, usage: { prompt_tokens: tokens, total_tokens: tokens } };
  }
}

function embedWith(
  route: Route<'embedding'>,
  attempt: Attempt,
  call: { inputs: Array<string | number[]>; format: EncodingFormat; request: ParsedEmbeddingsRequest['request']; cancellation: AbortSignal },
) {
  return route.provider.embed(attempt, {
    model: route.upstreamModel,
    inputs: call.inputs,
    encodingFormat: call.format,
    ...(call.request.dimensions === undefined ? {} : { dimensions: call.request.dimensions }),
    ...(call.request.user === undefined ? {} : { user: call.request.user }),
    cancellation: call.cancellation,
  });
}

/** Batches must fit whichever route serves them. */
function tightestLimits(routes: readonly Route<'embedding'>[]): EmbeddingLimits {
  return routes.reduce<EmbeddingLimits>((limits, route) => {
    const own = route.provider.embeddingLimits;
    return { maxInputs: Math.min(limits.maxInputs, own.maxInputs), maxTokens: Math.min(limits.maxTokens, own.maxTokens) };
  }, UNLIMITED);
}

function inFormat(vector: number[] | string, format: EncodingFormat): number[] | string {
  if (format === 'base64') return typeof vector === 'string' ? vector : vectorToBase64(vector);
  return typeof vector === 'string' ? vectorFromBase64(vector) : vector;
}
