import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'undici';
import { startFakeServer } from './json-fake-server.js';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from './openai-upstream.js';

export interface AzureRequest {
  deployment: string;
  operation: string;
  apiVersion: string | null;
  headers: IncomingHttpHeaders;
}

export interface FakeAzureUpstream {
  /** The resource endpoint, as configured in `base_url`. */
  readonly url: string;
  readonly requests: AzureRequest[];
  /** The OpenAI fake behind it: Azure's wire format is OpenAI's, only URLs and auth differ. */
  readonly openai: FakeOpenAIUpstream;
  close(): Promise<void>;
}

const DEPLOYMENT_PATH = /^\/openai\/deployments\/([^/]+)\/(.+)$/;

/**
 * Azure OpenAI's URLs in front of the recorded OpenAI fake: `/openai/deployments/{deployment}/{operation}?api-version=…`
 * is recorded, checked for the `api-key` header, and answered by the OpenAI fake's `/v1/{operation}`.
 */
export async function startFakeAzureUpstream(): Promise<FakeAzureUpstream> {
  const openai = await startFakeOpenAIUpstream({ splitBytes: false });
  const requests: AzureRequest[] = [];
  const server = await startFakeServer((incoming, outgoing, rawBody) => {
    const url = new URL(incoming.url ?? '/', 'http://azure.local');
    const match = DEPLOYMENT_PATH.exec(url.pathname);
    if (match === null || incoming.headers['api-key'] === undefined) {
      outgoing.writeHead(match === null ? 404 : 401, { 'content-type': 'application/json' });
      outgoing.end(
        JSON.stringify({
          error: { code: match === null ? '404' : '401', message: match === null ? 'Resource not found' : 'Access denied due to missing subscription key.' },
        }),
      );
      return;
    }
    const [, deployment = '', operation = ''] = match;
    requests.push({ deployment: decodeURIComponent(deployment), operation, apiVersion: url.searchParams.get('api-version'), headers: incoming.headers });
    request(`${openai.url}/${operation}`, {
      method: 'POST',
      headers: { 'content-type': incoming.headers['content-type'] ?? 'application/json', authorization: 'Bearer from-azure-fake' },
      body: rawBody,
    }).then(
      (answer) => {
        outgoing.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'application/json') });
        answer.body.pipe(outgoing);
      },
      () => outgoing.destroy(),
    );
  });
  return {
    url: server.url,
    requests,
    openai,
    async close() {
      await server.close();
      await openai.close();
    },
  };
}
