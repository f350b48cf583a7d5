// The bystander of the idle-sockets suite, in a process of its own: the suite's process holds the
// attack's 10,050 sockets and handles their answers and closes, and a bystander sharing its event
// loop could be kept from writing its request head long enough to be timed out by the gateway — a
// stall of the test, not of the gateway. Run by `node` itself (type stripping): Node's modules only.
//
//   node bystander-process.ts <port> <token> <local address> <every ms>
//
// Polls `/health` and an authenticated chat completion, each on a new connection, every <every
// ms>; writes one JSON line per outcome ({ path, result }) to stdout; when stdin ends, finishes the
// round under way (at least one) and exits.
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

const [port, token, localAddress, everyMs] = process.argv.slice(2);
if (port === undefined || token === undefined || localAddress === undefined || everyMs === undefined) {
  process.stderr.write('usage: bystander-process.ts <port> <token> <local address> <every ms>\n');
  process.exit(2);
}

let running = true;
process.stdin.on('data', () => undefined);
process.stdin.once('end', () => {
  running = false;
});

function call(method: string, path: string, body: string | undefined): Promise<number | string> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const outgoing = httpRequest({ host: '127.0.0.1', port: Number(port), localAddress, method, path, headers, agent: false, timeout: 3_000 }, (response) => {
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
      response.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    outgoing.once('timeout', () => outgoing.destroy(Object.assign(new Error('no answer in 3 s'), { code: 'TIMEOUT' })));
    outgoing.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    outgoing.end(body);
  });
}

const chat = JSON.stringify({ model: 'ok', messages: [{ role: 'user', content: 'Hello' }] });
do {
  const [health, completion] = await Promise.all([call('GET', '/health', undefined), call('POST', '/v1/chat/completions', chat)]);
  process.stdout.write(`${JSON.stringify({ path: '/health', result: health })}\n${JSON.stringify({ path: '/v1/chat/completions', result: completion })}\n`);
  if (running) await sleep(Number(everyMs));
} while (running);
process.stdin.destroy();
