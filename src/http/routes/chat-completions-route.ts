import { parseChatCompletionRequest } from '../../api/chat-completion-request.js';
import type { SessionIdentity } from '../../routing/index.js';
import type { ChatCompletionService } from '../../services/index.js';
import type { DirectRoute } from '../direct/direct-route.js';
import { sendBody, type HeaderList } from '../direct/send-response.js';
import { writeEventStream } from '../event-stream.js';
import type { PausedStreams } from '../paused-streams.js';

export interface StreamFailureLogger {
  warn(object: object, message: string): void;
}

/** The hottest route of the gateway, so it is served directly (see direct/direct-route.ts). */
export function chatCompletionsRoute(chat: ChatCompletionService, pausedStreams: PausedStreams, logger: StreamFailureLogger): DirectRoute {
  return {
    path: '/v1/chat/completions',
    scope: 'chat',
    endpoint: 'chat.completions',
    async handle({ raw, response, body, principal, record, cancellation }) {
      const chatRequest = parseChatCompletionRequest(body);
      const input = { principal, request: chatRequest, sessionHeader: raw.headers['x-session-id'], record, cancellation };
      if (chatRequest.stream === true) {
        const outcome = await chat.stream(input);
        await writeEventStream(response, responseHeaders(record.publicId, outcome.session), outcome.events, record, pausedStreams, (error) =>
          logger.warn({ err: error, requestId: record.id, clientRequestId: record.clientRequestId }, 'stream failed after the first byte'),
        );
        return;
      }
      const outcome = await chat.complete(input);
      record.markFirstByte();
      sendBody(response, 200, 'application/json', outcome.payload, responseHeaders(record.publicId, outcome.session));
    },
  };
}

function responseHeaders(id: string, session: SessionIdentity | null): HeaderList {
  return session === null ? ['x-request-id', id] : ['x-request-id', id, 'x-session-id', session.id, 'x-session-source', session.source];
}
