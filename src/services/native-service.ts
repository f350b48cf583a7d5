import type { IncomingHttpHeaders } from 'node:http';
import { parseNativeRequest } from '../api/native-request.js';
import { echo, GatewayError } from '../errors/index.js';
import type { NativeProvider, NativeResponse } from '../providers/provider-adapter.js';
import { nativeModelOf, resolveNativeSession, type ModelCatalog, type Router } from '../routing/index.js';
import type { RequestRecord } from '../usage/index.js';
import { forwardedRequestHeaders, forwardedResponseHeaders } from './native-headers.js';
import { resolveModel } from './resolve-model.js';
import { routeRequest, sessionFor, type RoutedRequest } from './routed-request.js';

export interface NativeInput extends RoutedRequest {
  /** The body exactly as received (compressed when it came so). */
  body: Buffer;
  /** The same body decoded and parsed, to route by. */
  parsed: unknown;
  headers: IncomingHttpHeaders;
}

export interface NativeOutcome {
  statusCode: number;
  /** The upstream's headers the client gets, as a flat name/value list. */
  headers: string[];
  /** The upstream's bytes, unchanged, as they arrive. */
  body: AsyncIterable<Buffer>;
}

/**
 * The native passthrough (`/v1/native/responses`): a Responses API request as Codex CLI sends it,
 * checked only for what routing needs, sent on unchanged to an OAuth account (provider `codex`)
 * — its session kept on one account — and answered with the upstream's status, headers of note
 * and bytes. Usage is read from the stream's final event on the way.
 */
export class NativeService {
  constructor(
    private readonly catalog: ModelCatalog,
    private readonly router: Router,
  ) {}

  async open(input: NativeInput): Promise<NativeOutcome> {
    const request = parseNativeRequest(input.parsed);
    const model = resolveModel(this.catalog, input.principal, request.model, 'chat');
    input.record.model = model.id;
    const native = nativeModelOf(model);
    if (native === null) {
      throw new GatewayError(
        'model_not_native',
        `The model ${echo(model.id)} is not served by ChatGPT accounts (provider codex), the only upstreams /v1/native/responses passes requests to; call /v1/responses or /v1/chat/completions with it.`,
        { param: 'model' },
      );
    }
    const identity = resolveNativeSession(input.headers, request.prompt_cache_key);
    const session = identity === null ? null : sessionFor(input.principal, native, identity);
    const call = { body: input.body, headers: forwardedRequestHeaders(input.headers), cancellation: input.cancellation };
    const { value: response } = await routeRequest(this.router, native, input, session, (route, attempt) => {
      // The body goes up unchanged: the upstream is asked for the model by the caller's own name.
      input.record.upstreamModel = request.model;
      return (route.native as NativeProvider).openNative(attempt, call);
    });
    return { statusCode: response.statusCode, headers: forwardedResponseHeaders(response.headers), body: accounted(response, input.record) };
  }
}

/** The bytes as they come; the usage the stream reported goes on the record when it ends, however it ends. */
async function* accounted(response: NativeResponse, record: RequestRecord): AsyncGenerator<Buffer> {
  try {
    yield* response.body;
  } finally {
    record.usage = response.usage();
  }
}
