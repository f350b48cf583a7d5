/**
 * A live OTLP/HTTP trace receiver for measuring what tracing costs (issue 33): it accepts the
 * gateway's JSON exports on `POST /v1/traces`, counts their spans, and answers as a collector
 * does. It runs as a process of its own, so that its CPU is not the gateway's.
 *
 *   node dist-bench/otlp-receiver.js [port]   (prints {"port": N}; on SIGTERM, {"spans": N, "exports": N})
 *
 *   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:N node dist-bench/run-bench.js --baseline DIR …
 * measures the gateway with tracing on (a build without tracing ignores the variable).
 */
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 0);
let spans = 0;
let exports = 0;

/** Spans in an OTLP JSON export: resourceSpans[].scopeSpans[].spans[]. */
function spansIn(body: string): number {
  const parsed = JSON.parse(body) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
  let count = 0;
  for (const resource of parsed.resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) count += scope.spans?.length ?? 0;
  return count;
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    if (request.method !== 'POST' || request.url !== '/v1/traces') {
      response.writeHead(404).end();
      return;
    }
    exports++;
    spans += spansIn(Buffer.concat(chunks).toString('utf8'));
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : port })}\n`);
});
process.on('SIGTERM', () => {
  process.stdout.write(`${JSON.stringify({ spans, exports })}\n`);
  process.exit(0);
});
