import { startFakeServer } from '../../fake-upstreams/json-fake-server.js';

/**
 * Secrets an upstream quotes in its errors, as real ones do ("Incorrect API key provided: sk-…",
 * a token echoed from the Authorization header). None of these may reach a caller.
 */
export const QUOTED_SECRETS = ['sk-proj-AbCdEfGh1234567890xyz', 'sk-ant-api03-ZyXwVu9876543210abc', 'tok0abcdef0123456789qrs'] as const;

/** The sentence every error of this upstream says, quoting each secret. */
export const SECRET_MESSAGE = `Incorrect API key provided: ${QUOTED_SECRETS[0]}. Also tried ${QUOTED_SECRETS[1]} with Authorization: Bearer ${QUOTED_SECRETS[2]}.`;

export interface CallerSecretsUpstream {
  /** http://127.0.0.1:PORT: OpenAI-compatible at `/v1`, a Codex backend at `/codex`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * An upstream whose refusals and in-band stream errors quote keys. The upstream model name picks
 * the answer: `refuse` answers 400 with SECRET_MESSAGE; `fail-midstream` streams one event, then an
 * in-band error saying it (chat: an `error` chunk; Responses and Codex: `error`, then
 * `response.failed` whose `response.error.message` says it).
 */
export async function startCallerSecretsUpstream(): Promise<CallerSecretsUpstream> {
  return startFakeServer((request, response, rawBody) => {
    const body = JSON.parse(rawBody.toString('utf8') || '{}') as { model?: string; stream?: boolean };
    const path = request.url ?? '';
    if (body.model?.endsWith('refuse') === true) {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: SECRET_MESSAGE, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    if (path.endsWith('/chat/completions')) {
      const chunk = {
        id: 'c1',
        object: 'chat.completion.chunk',
        created: 0,
        model: body.model,
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }],
      };
      response.write(`data: ${JSON.stringify(chunk)}\n\n`);
      response.end(`data: ${JSON.stringify({ error: { message: SECRET_MESSAGE, type: 'server_error' } })}\n\n`);
      return;
    }
    // A Responses stream (OpenAI's /v1/responses, or the Codex backend's /responses).
    const created = { id: 'resp_1', object: 'response', status: 'in_progress', model: body.model, output: [], error: null };
    response.write(`event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: created })}\n\n`);
    response.write(
      `event: error\ndata: ${JSON.stringify({ type: 'error', sequence_number: 1, code: 'invalid_api_key', message: SECRET_MESSAGE, param: null })}\n\n`,
    );
    // The failed event arrives in two pieces, cut inside the quoted key.
    const failed = `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', sequence_number: 2, response: { ...created, status: 'failed', error: { code: 'server_error', message: SECRET_MESSAGE } } })}\n\n`;
    const cut = failed.indexOf(QUOTED_SECRETS[0]) + 6;
    response.write(failed.slice(0, cut));
    setTimeout(() => response.end(failed.slice(cut)), 20);
  });
}
