import { peekFirst } from '../core/index.js';
import { echo, GatewayError } from '../errors/index.js';
import type { TranscriptionCall, TranscriptionProvider, TranscriptionResult } from '../providers/provider-adapter.js';
import type { CatalogModel, ModelCatalog, Router } from '../routing/index.js';
import { resolveModel, usableModels } from './resolve-model.js';
import { namedSession, routeRequest, type RoutedRequest } from './routed-request.js';
import { transcriptEvents } from './transcript-events.js';

export interface TranscriptionInput extends RoutedRequest {
  /** As the client sent it; the configured default when absent. */
  model: string | undefined;
  file: TranscriptionCall['file'];
  fields: TranscriptionCall['fields'];
  /** `stream=true`: the answer is events, whatever the upstream does. */
  stream: boolean;
}

/** A whole transcript in the asked format, or a transcript event stream (`text/event-stream`). */
export type TranscriptionOutcome = ({ kind: 'whole' } & TranscriptionResult) | { kind: 'events'; events: AsyncIterable<Buffer> };

/**
 * Speech to text, and speech to English text (translations). The upload sits on disk, so each
 * route tried reads it afresh: failover works for uploads as for everything else.
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

  /**
   * Asked to stream, an upstream's own event stream is passed on (its first event read before
   * answering, so that one that fails first is replaced by the next route), and a whole transcript
   * is turned into events.
   */
  async transcribe(input: TranscriptionInput): Promise<TranscriptionOutcome> {
    const model = this.resolve(input);
    const { file, fields, stream, cancellation } = input;
    const { value } = await routeRequest(this.router, model, input, namedSession(input, model), async (route, attempt) => {
      const result = await route.provider.transcribe(attempt, { model: route.upstreamModel, file, fields, stream, cancellation });
      if (!('events' in result)) return result;
      const events = await peekFirst(result.events);
      if (events.empty) {
        await events.return();
        throw new GatewayError('upstream_invalid_response', `Upstream ${route.credential.id} ended the stream without sending an event.`);
      }
      return { events };
    });
    if ('events' in value) return { kind: 'events', events: value.events };
    return stream ? { kind: 'events', events: transcriptEvents(value) } : { kind: 'whole', ...value };
  }

  /** Only the model's routes whose upstream translates are tried; a model with none is refused, naming those that have. */
  async translate(input: TranscriptionInput): Promise<TranscriptionResult> {
    const model = this.resolve(input);
    const routes = model.routes.filter((route) => route.provider.translate !== undefined);
    if (routes.length === 0) {
      throw new GatewayError(
        'model_not_supported',
        `The model ${echo(model.id)} cannot translate: its upstreams have no translation endpoint. ${this.translatingModels(input)}`,
        {
          param: 'model',
        },
      );
    }
    const translating: CatalogModel<'transcription'> =
      routes.length === model.routes.length ? model : { ...model, routes, totalWeight: routes.reduce((sum, route) => sum + route.weight, 0) };
    const { file, fields, cancellation } = input;
    const { value } = await routeRequest(this.router, translating, input, namedSession(input, model), (route, attempt) =>
      (route.provider as Required<TranscriptionProvider>).translate(attempt, { model: route.upstreamModel, file, fields, stream: false, cancellation }),
    );
    return value;
  }

  private resolve(input: TranscriptionInput): CatalogModel<'transcription'> {
    const modelId = input.model ?? this.defaultModel;
    if (modelId === undefined) throw new GatewayError('model_not_found', 'No transcription model is configured.', { param: 'model' });
    // Kept on the log whether or not it exists, as the JSON endpoints' are (http/requested-model.ts).
    if (modelId.length <= 256) input.record.model = modelId;
    const model = resolveModel(this.catalog, input.principal, modelId, 'transcription');
    input.record.model = model.id;
    return model;
  }

  private translatingModels(input: TranscriptionInput): string {
    const usable = usableModels(this.catalog, input.principal, 'transcription', (model) =>
      model.routes.some((route) => route.provider.translate !== undefined),
    );
    return usable.length > 0
      ? `Models this API key may translate with: ${usable.join(', ')}.`
      : 'No configured model serves translations: they need a transcription model on an OpenAI, Azure or OpenAI-compatible upstream.';
  }
}
