import type { Principal } from '../access/index.js';
import { GatewayError } from '../errors/index.js';
import type { TranscriptionCall, TranscriptionResult } from '../providers/provider-adapter.js';
import type { RequestRecord } from '../usage/index.js';
import type { ModelCatalog, Router } from '../routing/index.js';
import { resolveModel } from './resolve-model.js';

export interface TranscriptionInput {
  principal: Principal;
  /** As the client sent it; the configured default when absent. */
  model: string | undefined;
  file: TranscriptionCall['file'];
  fields: TranscriptionCall['fields'];
  record: RequestRecord;
  cancellation: AbortSignal;
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

  async transcribe({ principal, model: requested, file, fields, record, cancellation }: TranscriptionInput): Promise<TranscriptionResult> {
    const modelId = requested ?? this.defaultModel;
    if (modelId === undefined) throw new GatewayError('model_not_found', 'No transcription model is configured.', { param: 'model' });
    const model = resolveModel(this.catalog, principal, modelId, 'transcription');
    record.model = model.id;
    const { value } = await this.router.route(
      model,
      { cancellation, observer: record },
      (route, attempt) => {
        return route.provider.transcribe(attempt, { model: route.upstreamModel, file, fields, cancellation });
      },
    );
    return value;
  }
}
