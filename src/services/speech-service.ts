import { peekFirst } from '../core/index.js';
import { SPEECH_CONTENT_TYPES, type SpeechRequest } from '../api/speech-request.js';
import type { ModelCatalog, Router } from '../routing/index.js';
import { resolveModel } from './resolve-model.js';
import { namedSession, routeRequest, type RoutedRequest } from './routed-request.js';

export interface SpeechInput extends RoutedRequest {
  request: SpeechRequest;
}

export interface SpeechOutcome {
  contentType: string;
  /** The audio, first chunk already received: an upstream that fails before it is replaced by the next route. */
  audio: AsyncIterable<Buffer>;
}

/** Text to speech: the audio streams from the upstream to the client as it is produced. */
export class SpeechService {
  constructor(
    private readonly catalog: ModelCatalog,
    private readonly router: Router,
  ) {}

  async speak(input: SpeechInput): Promise<SpeechOutcome> {
    const { principal, request, record, cancellation } = input;
    const model = resolveModel(this.catalog, principal, request.model, 'speech');
    record.model = model.id;
    const format = request.response_format ?? 'mp3';
    const { value } = await routeRequest(this.router, model, input, namedSession(input, model), async (route, attempt) => {
      const { audio } = await route.provider.speak(attempt, {
        model: route.upstreamModel,
        input: request.input,
        voice: request.voice ?? model.defaultVoice,
        responseFormat: format,
        speed: request.speed ?? 1,
        ...(request.instructions === undefined ? {} : { instructions: request.instructions }),
        cancellation,
      });
      return peekFirst(audio);
    });
    return { contentType: SPEECH_CONTENT_TYPES[format], audio: value };
  }
}
