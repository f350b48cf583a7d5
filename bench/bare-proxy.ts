import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { Pool } from 'undici';

/**
 * The Node floor: the least a Node proxy on undici can do. No auth, no parsing, no logging. The
 * small request body is read whole and sent as one buffer; the answer goes through undici's
 * `stream()`, its cheapest API (measured: about half the CPU of `request()` + `pipeline`).
 * Whatever Switchyard spends above this is the cost of its features.
 *
 * With a third argument above 1, that many processes share the port through `node:cluster`, as
 * `switchyard serve --workers` does (bench/workers-bench.ts): the floor of that layout.
 */
const [, , listenPort = '0', upstreamOrigin = 'http://127.0.0.1:9000', workers = '1'] = process.argv;

if (Number(workers) > 1 && cluster.isPrimary) {
  let listening = 0;
  for (let index = 0; index < Number(workers); index++) {
    cluster.fork().on('message', (message: { port: number }) => {
      if (++listening === Number(workers)) process.stdout.write(`${JSON.stringify({ port: message.port })}\n`);
    });
  }
  process.on('SIGTERM', () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.kill('SIGTERM');
    process.exit(0);
  });
} else {
  serve();
}

function serve(): void {
  const pool = new Pool(upstreamOrigin, { connections: 256, keepAliveTimeout: 60_000 });

  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      pool.stream(
        {
          path: request.url ?? '/',
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: request.headers.authorization ?? '' },
          body: parts.length === 1 ? parts[0] : Buffer.concat(parts),
        },
        ({ statusCode, headers }) => {
          const contentType = headers['content-type'];
          response.writeHead(statusCode, typeof contentType === 'string' ? { 'content-type': contentType } : {});
          return response;
        },
        (error) => {
          if (error === null) return;
          if (response.headersSent) response.destroy();
          else response.writeHead(502).end();
        },
      );
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(listenPort), '127.0.0.1', () => {
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    if (cluster.isWorker) process.send?.({ port });
    else process.stdout.write(`${JSON.stringify({ port })}\n`);
  });
}
