import type { RerankRequest } from '../api/rerank-request.js';
import type { ModelCatalog, Router } from '../routing/index.js';
import { resolveModel } from './resolve-model.js';
import { namedSession, routeRequest, type RoutedRequest } from './routed-request.js';

export interface RerankInput extends RoutedRequest {
  request: RerankRequest;
}

/** The rerank result object of spec 2.4, with the documents when asked for, Cohere/Jina style. */
export interface RerankList {
  model: string;
  results: Array<{ index: number; relevance_score: number; document?: { text: string } }>;
  usage?: { total_tokens: number };
}

/**
 * Rerank: the upstream scores, the gateway orders. Results are sorted by score, highest first
 * (ties keep input order), cut to `top_n`, and carry each document's original index — whatever
 * order or subset the upstream returned.
 */
export class RerankService {
  constructor(
    private readonly catalog: ModelCatalog,
    private readonly router: Router,
  ) {}

  async rerank(input: RerankInput): Promise<RerankList> {
    const { principal, request, record, cancellation } = input;
    const model = resolveModel(this.catalog, principal, request.model, 'rerank');
    record.model = model.id;
    const { value } = await routeRequest(this.router, model, input, namedSession(input, model), (route, attempt) => {
      return route.provider.rerank(attempt, {
        model: route.upstreamModel,
        query: request.query,
        documents: request.documents,
        ...(request.top_n === undefined ? {} : { topN: request.top_n }),
        cancellation,
      });
    });
    const seen = new Set<number>();
    const scores = value.scores.filter(({ index }) => index >= 0 && index < request.documents.length && !seen.has(index) && seen.add(index));
    scores.sort((left, right) => right.score - left.score || left.index - right.index);
    const kept = request.top_n === undefined ? scores : scores.slice(0, request.top_n);
    if (value.totalTokens !== null) record.usage = { promptTokens: value.totalTokens, completionTokens: 0, totalTokens: value.totalTokens };
    return {
      model: model.id,
      results: kept.map(({ index, score }) =>
        request.return_documents === true
          ? { index, relevance_score: score, document: { text: request.documents[index] as string } }
          : { index, relevance_score: score },
      ),
      ...(value.totalTokens === null ? {} : { usage: { total_tokens: value.totalTokens } }),
    };
  }
}
