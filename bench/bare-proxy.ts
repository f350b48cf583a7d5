import { createServer } from 'node:http';
import { Pool } from 'undici';

/**
 * The Node floor: the least a Node proxy on undici can do. No auth, no parsing, no logging. The
 * small request body is read whole and sent as one buffer; the answer goes through undici's
 * `stream()`, its cheapest API (measured: about half the CPU of `request()` + `pipeline`).
 * Whatever Switchyard spends above this is the cost of its features.
 */
const [, , listenPort = '0', upstreamOrigin = 'http://127.0.0.1:9000'] = process.argv;
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
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 })}\n`);
});
