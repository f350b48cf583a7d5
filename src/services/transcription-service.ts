import { GatewayError } from '../errors/index.js';
import type { TranscriptionCall, TranscriptionResult } from '../providers/provider-adapter.js';
import type { ModelCatalog, Router } from '../routing/index.js';
import { resolveModel } from './resolve-model.js';
import { namedSession, routeRequest, type RoutedRequest } from './routed-request.js';

export interface TranscriptionInput extends RoutedRequest {
  /** As the client sent it; the configured default when absent. */
  model: string | undefined;
  file: TranscriptionCall['file'];
  fields: TranscriptionCall['fields'];
}

/**
 * Speech to text. The upload sits on disk, so each route tried reads it afresh: failover works for
 * uploads as for everything else.
 */
export class TranscriptionService {
  private readonly defaultModel: string | undefined;

  constructor(
    private readonly catalog: ModelCatalog,
    private readonly router: Router,
    configuredDefault: string | undefined,
  ) {
    this.defaultModel = configuredDefault ?? [...catalog.all()].find((model) => model.type === 'transcription')?.id;
  }

  async transcribe(input: TranscriptionInput): Promise<TranscriptionResult> {
    const { principal, model: requested, file, fields, record, cancellation } = input;
    const modelId = requested ?? this.defaultModel;
    if (modelId === undefined) throw new GatewayError('model_not_found', 'No transcription model is configured.', { param: 'model' });
    // Kept on the log whether or not it exists, as the JSON endpoints' are (http/requested-model.ts).
    if (modelId.length <= 256) record.model = modelId;
    const model = resolveModel(this.catalog, principal, modelId, 'transcription');
    record.model = model.id;
    const { value } = await routeRequest(
      this.router,
      model,
      input,
      namedSession(input, model),
      (route, attempt) => {
        return route.provider.transcribe(attempt, { model: route.upstreamModel, file, fields, cancellation });
      },
    );
    return value;
  }
}
