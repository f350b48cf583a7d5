import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { Agent, FormData, request, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fakeWav, startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../fake-upstreams/openai-upstream.js';
import { nginxBinary, startNginx, type PrivateNginx } from '../support/private-nginx.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';
import { makeTestCertificates, opensslMissing, type TestCertificates } from '../support/test-certificates.js';

/**
 * The gateway behind a real nginx (TEST_NGINX, Debian's): the configuration docs/reverse-proxy.md
 * documents, read from that page, with `server.trusted_proxies`; and the textbook one
 * (`proxy_pass` alone) without it. The browser is played by undici from 127.0.0.2, so the
 * client's address differs from nginx's (127.0.0.1, the trusted proxy).
 */
const CLIENT_ADDRESS = '127.0.0.2';
const MESSAGES = [{ role: 'user', content: 'Hello' }];

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: Record<string, unknown> & { error?: { code: string; message: string } };
}

describe.skipIf(nginxBinary === undefined || opensslMissing() !== null)('behind nginx', () => {
  let certificates: TestCertificates;
  let openai: FakeOpenAIUpstream;
  let held: HeldStreamUpstream;
  let trusting: TestGateway;
  let plain: TestGateway;
  const logLines: Array<Record<string, unknown>> = [];
  let documented: PrivateNginx;
  let textbook: PrivateNginx;
  let client: Agent;
  let adminToken: string;
  let publicUrl: string;

  beforeAll(async () => {
    certificates = makeTestCertificates();
    openai = await startFakeOpenAIUpstream();
    held = await startHeldStreamUpstream();
    const document = {
      upstreams: [
        { id: 'openai', provider: 'openai', base_url: openai.url, api_key: 'sk-upstream' },
        { id: 'held', provider: 'openai', base_url: held.url, api_key: 'sk-held' },
      ],
      models: [
        { id: 'gpt-4o-mini', type: 'chat', routes: [{ upstream: 'openai', model: 'gpt-4o-mini-2024-07-18' }] },
        { id: 'held-chat', type: 'chat', routes: [{ upstream: 'held', model: 'held-model' }] },
        { id: 'whisper-1', type: 'transcription', routes: [{ upstream: 'openai', model: 'gpt-4o-transcribe' }] },
      ],
    };
    const server = { host: '127.0.0.1', port: 0, shutdown_timeout_ms: 5_000 };
    trusting = await startTestGateway({ ...document, server: { ...server, trusted_proxies: ['127.0.0.1'] } }, { logLines });
    plain = await startTestGateway({ ...document, server });
    adminToken = (await trusting.gateway.tokens.create({ team: 'ops', scopes: ['admin'] })).secret;
    documented = await startNginx((port) => documentedConfig(port, trusting.gateway.url, certificates));
    textbook = await startNginx((port) => `server {\n  listen 127.0.0.1:${port};\n  location / {\n    proxy_pass ${plain.gateway.url};\n  }\n}`);
    publicUrl = `https://127.0.0.1:${documented.port}`;
    client = new Agent({ localAddress: CLIENT_ADDRESS, connect: { ca: certificates.read(certificates.caFile) } });
  }, 30_000);
  afterAll(async () => {
    await documented?.close();
    await textbook?.close();
    await trusting?.close();
    await plain?.close();
    await held?.close();
    await openai?.close();
    await client?.close();
    certificates?.remove();
  });

  async function call(url: string, method: Dispatcher.HttpMethod, headers: Record<string, string>, body?: unknown): Promise<Answer> {
    const response = await request(url, {
      method,
      dispatcher: client,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.body.text();
    let json: Answer['json'] = {};
    try {
      json = JSON.parse(text) as Answer['json'];
    } catch {
      // nginx's own pages are HTML.
    }
    return { status: response.statusCode, headers: response.headers, text, json };
  }

  async function signIn(base: string, token: string, headers: Record<string, string> = {}): Promise<{ cookie: string; setCookie: string; csrf: string }> {
    const answer = await call(`${base}/admin/v1/console/session`, 'POST', { authorization: `Bearer ${token}`, ...headers });
    expect(answer.status, answer.text).toBe(201);
    const setCookie = String(answer.headers['set-cookie'] ?? '');
    return { cookie: setCookie.split(';')[0] ?? '', setCookie, csrf: String(answer.json['csrf_token']) };
  }

  it('the documented config with trusted_proxies: the console signs in and writes with Origin = the public URL', async () => {
    const { cookie, csrf } = await signIn(publicUrl, adminToken);
    const made = await call(
      `${publicUrl}/admin/v1/tokens`,
      'POST',
      { cookie, origin: publicUrl, 'x-csrf-token': csrf },
      { team: 'ops', name: 'made behind nginx' },
    );
    expect(made.status, made.text).toBe(201);
    expect(String(made.json['secret'])).toMatch(/^svc_/);
    // Another origin is still refused through the proxy.
    const forged = await call(
      `${publicUrl}/admin/v1/tokens`,
      'POST',
      { cookie, origin: 'https://evil.example', 'x-csrf-token': csrf },
      { team: 'ops', name: 'forged' },
    );
    expect(forged.status).toBe(403);
    expect(forged.json.error?.code).toBe('csrf_check_failed');
  });

  it('the textbook config without trusted_proxies: the write is 403, and the message says what to set', async () => {
    const token = (await plain.gateway.tokens.create({ team: 'ops', scopes: ['admin'] })).secret;
    const base = `http://127.0.0.1:${textbook.port}`;
    const { cookie, csrf } = await signIn(base, token);
    const refused = await call(`${base}/admin/v1/tokens`, 'POST', { cookie, origin: base, 'x-csrf-token': csrf }, { team: 'ops', name: 'refused' });
    expect(refused.status).toBe(403);
    expect(refused.json.error?.code).toBe('csrf_check_failed');
    const message = refused.json.error?.message ?? '';
    expect(message).toContain(`Origin '${base}'`);
    expect(message).toContain(`(${quoted(new URL(plain.gateway.url).host)})`);
    expect(message).toContain('server.trusted_proxies');
    expect(message).toContain('docs/reverse-proxy.md');
  });

  it("a 2 MB transcription upload passes the documented config (the textbook one answers nginx's 413)", async () => {
    const wav = fakeWav(44_000);
    expect(wav.length).toBeGreaterThan(2_000_000);
    const upload = async (base: string, token: string) => {
      const form = new FormData();
      form.append('model', 'whisper-1');
      form.append('file', new Blob([wav], { type: 'audio/wav' }), 'long.wav');
      const response = await request(`${base}/v1/audio/transcriptions`, {
        method: 'POST',
        dispatcher: client,
        headers: { authorization: `Bearer ${token}` },
        body: form,
      });
      return { status: response.statusCode, text: await response.body.text() };
    };
    const through = await upload(publicUrl, trusting.token);
    expect(through.status, through.text).toBe(200);
    expect(JSON.parse(through.text)).toEqual({ text: `received ${wav.length} bytes as long.wav` });
    const refused = await upload(`http://127.0.0.1:${textbook.port}`, plain.token);
    expect(refused.status).toBe(413);
    expect(refused.text).toContain('nginx');
  });

  it('a chat stream through the documented config arrives event by event while the upstream holds the rest', async () => {
    const response = await request(`${publicUrl}/v1/chat/completions`, {
      method: 'POST',
      dispatcher: client,
      headers: { authorization: `Bearer ${trusting.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'held-chat', stream: true, messages: MESSAGES }),
    });
    expect(response.statusCode).toBe(200);
    const events = response.body[Symbol.asyncIterator]();
    let received = '';
    // The upstream sends one event, then waits to be released: the event must come through now.
    // Were it buffered this would wait for ever, so a deadline turns that into a clear failure.
    const first = await withDeadline(
      (async () => {
        while (!received.includes('first-part')) {
          const next = await events.next();
          if (next.done === true) break;
          received += Buffer.from(next.value as Uint8Array).toString('utf8');
        }
        return received;
      })(),
      10_000,
      'the first event was held back by the proxy',
    );
    expect(first).toContain('first-part');
    expect(held.finished).toBe(false);
    held.release();
    for (let next = await events.next(); next.done !== true; next = await events.next()) received += Buffer.from(next.value as Uint8Array).toString('utf8');
    expect(received).toContain('second-part');
    expect(received).toContain('data: [DONE]');
  });

  it('logs the X-Forwarded-For client behind the trusted proxy, and ignores the header from anyone else', async () => {
    const logged = (requestId: string): Promise<unknown> =>
      vi.waitFor(
        async () => {
          const row = await call(`${trusting.gateway.url}/admin/v1/requests/${requestId}`, 'GET', { authorization: `Bearer ${adminToken}` });
          expect(row.status, `no request log row for ${requestId}`).toBe(200);
          return row.json['client_address'];
        },
        { timeout: 5_000, interval: 25 },
      );
    const chat = (base: string, headers: Record<string, string>, token = trusting.token) =>
      call(`${base}/v1/chat/completions`, 'POST', { authorization: `Bearer ${token}`, ...headers }, { model: 'gpt-4o-mini', messages: MESSAGES });
    const clientOf = async (answer: Answer): Promise<unknown> => {
      expect(answer.status, answer.text).toBe(200);
      const requestId = String(answer.headers['x-request-id']);
      const line = await accessLine(logLines, requestId);
      // The access log and the request log agree.
      expect(await logged(requestId)).toBe(line['client']);
      return line['client'];
    };
    // Through nginx: the client, not nginx.
    expect(await clientOf(await chat(publicUrl, {}))).toBe(CLIENT_ADDRESS);
    // Through nginx with an address of the client's own making: nginx appends the real one, which wins.
    expect(await clientOf(await chat(publicUrl, { 'x-forwarded-for': '203.0.113.9' }))).toBe(CLIENT_ADDRESS);
    // Straight to the gateway from an address it does not trust: the header is ignored.
    expect(await clientOf(await chat(trusting.gateway.url, { 'x-forwarded-for': '203.0.113.9' }))).toBe(CLIENT_ADDRESS);
  });

  it('sets Secure on the console cookie for X-Forwarded-Proto https from a trusted proxy, not from another peer', async () => {
    // Through nginx over TLS (no Origin sent: the flag comes from X-Forwarded-Proto).
    expect((await signIn(publicUrl, adminToken)).setCookie).toMatch(/;\s*Secure/i);
    // Straight from 127.0.0.2, which is not a trusted proxy, claiming https.
    expect((await signIn(trusting.gateway.url, adminToken, { 'x-forwarded-proto': 'https' })).setCookie).not.toMatch(/Secure/i);
    // Through the textbook nginx, which passes the client's own header on to a gateway that trusts no one.
    const token = (await plain.gateway.tokens.create({ team: 'ops', scopes: ['admin'] })).secret;
    expect((await signIn(`http://127.0.0.1:${textbook.port}`, token, { 'x-forwarded-proto': 'https' })).setCookie).not.toMatch(/Secure/i);
  });
});

/** The nginx block of docs/reverse-proxy.md, pointed at the test's gateway, port and certificate. */
function documentedConfig(port: number, gatewayUrl: string, certificates: TestCertificates): string {
  const page = readFileSync(new URL('../../docs/reverse-proxy.md', import.meta.url), 'utf8');
  const block = /```nginx\n([\s\S]*?)```/.exec(page)?.[1];
  if (block === undefined) throw new Error('docs/reverse-proxy.md has no nginx block');
  const replacements: Array<[string, string]> = [
    ['server 127.0.0.1:8080;', `server ${new URL(gatewayUrl).host};`],
    ['listen 443 ssl;', `listen 127.0.0.1:${port} ssl;`],
    ['/etc/ssl/certs/gateway.example.com.pem', certificates.serverCertFile],
    ['/etc/ssl/private/gateway.example.com.key', certificates.serverKeyFile],
  ];
  let config = block;
  for (const [from, to] of replacements) {
    if (!config.includes(from)) throw new Error(`the nginx block of docs/reverse-proxy.md no longer has "${from}"`);
    config = config.replace(from, to);
  }
  return config;
}

function quoted(value: string): string {
  return `'${value}'`;
}

function accessLine(lines: ReadonlyArray<Record<string, unknown>>, requestId: string): Promise<Record<string, unknown>> {
  return vi.waitFor(
    () => {
      const line = lines.find((candidate) => candidate['msg'] === 'request' && candidate['requestId'] === requestId);
      if (line === undefined) throw new Error(`no access line for ${requestId}`);
      return line;
    },
    { timeout: 2_000, interval: 10 },
  );
}

async function withDeadline<T>(work: Promise<T>, milliseconds: number, why: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(why)), milliseconds)))]);
  } finally {
    clearTimeout(timer);
  }
}

interface HeldStreamUpstream {
  url: string;
  /** Whether the held stream has been finished (after `release`). */
  finished: boolean;
  release(): void;
  close(): Promise<void>;
}

/** An OpenAI-compatible chat upstream whose stream sends one event, then holds until released. */
async function startHeldStreamUpstream(): Promise<HeldStreamUpstream> {
  let release: () => void = () => undefined;
  const upstream: HeldStreamUpstream = { url: '', finished: false, release: () => release(), close: async () => undefined };
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-held', object: 'chat.completion.chunk', created: 1, model: 'held-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const server: Server = createServer((incoming, response: ServerResponse) => {
    incoming.resume();
    incoming.on('end', () => {
      const released = new Promise<void>((resolve) => (release = resolve));
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(chunk({ role: 'assistant', content: 'first-part' }, null));
      void released.then(() => {
        response.write(chunk({ content: 'second-part' }, null));
        response.write(chunk({}, 'stop'));
        response.end('data: [DONE]\n\n');
        upstream.finished = true;
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  upstream.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  upstream.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return upstream;
}
