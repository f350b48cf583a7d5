import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseExposition, total } from '../support/prometheus-text.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

const SECRET_PROMPT = 'the launch code is 0000-tracing-must-not-carry-this';
const CALLER_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN_ID = '00f067aa0ba902b7';

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Array<{ key: string; value: OtlpValue }>;
  status?: { code?: number };
}

function attributesOf(span: OtlpSpan): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const { key, value } of span.attributes) {
    const raw = value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
    if (raw !== undefined) attributes[key] = typeof raw === 'string' && value.intValue !== undefined ? Number(raw) : raw;
  }
  return attributes;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function readBody(incoming: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** An OpenAI-compatible upstream that records the `traceparent` of each call and refuses the first `failFirst` with 503. */
async function startUpstream(failFirst: number) {
  const traceparents: string[] = [];
  let calls = 0;
  const server = createServer(async (incoming, response) => {
    await readBody(incoming);
    traceparents.push(String(incoming.headers.traceparent ?? ''));
    calls++;
    if (calls <= failFirst) {
      response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: 'upstream-model-2024',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 21, completion_tokens: 3, total_tokens: 24 },
      }),
    );
  });
  return { url: await listen(server), traceparents, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** An OTLP/HTTP receiver: keeps every span posted to /v1/traces (JSON). */
async function startReceiver() {
  const spans: OtlpSpan[] = [];
  const bodies: string[] = [];
  const server = createServer(async (incoming, response) => {
    const body = await readBody(incoming);
    bodies.push(body);
    if (incoming.url === '/v1/traces') {
      const document = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      for (const resource of document.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans);
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  return { url: await listen(server), spans, bodies, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

function gatewayDocument(primary: string, backup: string, tracing: Record<string, unknown>) {
  return {
    tracing,
    request_log: { flush_interval_ms: 50 },
    metrics: { enabled: true },
    upstreams: [
      { id: 'primary', provider: 'openai', base_url: `${primary}/v1`, api_key: 'sk-primary' },
      { id: 'backup', provider: 'openai', base_url: `${backup}/v1`, api_key: 'sk-backup' },
    ],
    models: [
      {
        id: 'pooled-chat',
        type: 'chat',
        strategy: 'ordered',
        routes: [
          { upstream: 'primary', model: 'upstream-model', priority: 0 },
          { upstream: 'backup', model: 'upstream-model', priority: 1 },
        ],
      },
    ],
  };
}

describe('OpenTelemetry traces', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let primary: Awaited<ReturnType<typeof startUpstream>>;
  let backup: Awaited<ReturnType<typeof startUpstream>>;
  let harness: TestGateway;

  beforeAll(async () => {
    receiver = await startReceiver();
    primary = await startUpstream(1);
    backup = await startUpstream(0);
    harness = await startTestGateway(gatewayDocument(primary.url, backup.url, { otlp_endpoint: receiver.url }));
  });
  afterAll(async () => {
    await harness.close();
    await Promise.all([receiver.close(), primary.close(), backup.close()]);
  });

  it("sends one span per request and one per attempt, continuing the caller's traceparent, with the GenAI attributes and no prompt", async () => {
    const answer = await request(`${harness.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${harness.token}`,
        'content-type': 'application/json',
        traceparent: `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01`,
        'x-request-id': 'traced-request',
      },
      body: JSON.stringify({ model: 'pooled-chat', messages: [{ role: 'user', content: SECRET_PROMPT }] }),
    });
    expect(answer.statusCode).toBe(200);
    await answer.body.text();
    const row = await harness.logRow('traced-request');

    const spans = await vi.waitFor(
      () => {
        const inTrace = receiver.spans.filter((span) => span.traceId === CALLER_TRACE_ID);
        expect(inTrace).toHaveLength(3);
        return inTrace;
      },
      { timeout: 10_000, interval: 100 },
    );
    const server = spans.find((span) => span.parentSpanId === CALLER_SPAN_ID) as OtlpSpan;
    expect(server).toBeDefined();
    expect(server.kind).toBe(2); // SERVER
    expect(server.name).toBe('chat pooled-chat');
    expect(attributesOf(server)).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'pooled-chat',
      'gen_ai.response.model': 'upstream-model',
      'gen_ai.usage.input_tokens': 21,
      'gen_ai.usage.output_tokens': 3,
      'switchyard.credential': 'backup',
      'switchyard.team': 'test',
      'switchyard.request_id': row.id,
      'http.response.status_code': 200,
    });
    const attempts = spans.filter((span) => span.parentSpanId === server.spanId);
    expect(attempts.map((span) => [span.kind, attributesOf(span)['switchyard.credential'], attributesOf(span)['switchyard.attempt.outcome']])).toEqual([
      [3, 'primary', 'upstream_error'],
      [3, 'backup', 'ok'],
    ]);
    expect(attributesOf(attempts[0] as OtlpSpan)).toMatchObject({ 'http.response.status_code': 503, 'error.type': 'upstream_error' });
    // Each upstream saw its own attempt's context, in the caller's trace.
    expect(primary.traceparents).toEqual([`00-${CALLER_TRACE_ID}-${(attempts[0] as OtlpSpan).spanId}-01`]);
    expect(backup.traceparents).toEqual([`00-${CALLER_TRACE_ID}-${(attempts[1] as OtlpSpan).spanId}-01`]);
    // No prompt or answer text on any span.
    expect(receiver.bodies.join('\n')).not.toContain('launch code');
    expect(receiver.bodies.join('\n')).not.toContain('Hello.');
  });

  it('starts a trace of its own for a caller that sends none', async () => {
    const before = receiver.spans.length;
    await harness.client.chat.completions.create({ model: 'pooled-chat', messages: [{ role: 'user', content: 'hi' }] });
    await vi.waitFor(() => expect(receiver.spans.length - before).toBe(2), { timeout: 10_000, interval: 100 });
    const [server, attempt] = receiver.spans.slice(before).sort((first, second) => (first.kind === 2 ? -1 : second.kind === 2 ? 1 : 0));
    expect(server?.parentSpanId ?? '').toBe('');
    expect(attempt?.parentSpanId).toBe(server?.spanId);
    expect([...primary.traceparents, ...backup.traceparents]).toContain(`00-${server?.traceId}-${attempt?.spanId}-01`);
  });
});

describe('a collector that is away', () => {
  it('costs requests nothing: they succeed, spans are dropped and counted, and one warning says so', async () => {
    const closed = await startReceiver();
    const deadUrl = closed.url;
    await closed.close();
    const primary = await startUpstream(0);
    const logLines: Array<Record<string, unknown>> = [];
    const harness = await startTestGateway(gatewayDocument(primary.url, primary.url, { otlp_endpoint: deadUrl }), { logLines });
    const metricsToken = await harness.createToken({ team: 'ops', scopes: ['metrics'] });
    for (let index = 0; index < 5; index++) {
      const started = performance.now();
      await harness.client.chat.completions.create({ model: 'pooled-chat', messages: [{ role: 'user', content: 'hi' }] });
      expect(performance.now() - started).toBeLessThan(2_000);
    }
    await vi.waitFor(
      async () => {
        const scrape = await request(`${harness.gateway.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
        expect(total(parseExposition(await scrape.body.text()), 'switchyard_spans_dropped_total')).toBeGreaterThanOrEqual(10);
      },
      { timeout: 15_000, interval: 250 },
    );
    const warnings = logLines.filter((line) => String(line['msg']).startsWith('trace export failed'));
    expect(warnings).toHaveLength(1);
    await harness.close();
    await primary.close();
  }, 30_000);
});
