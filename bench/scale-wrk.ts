import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { chatBody, LOAD_CORE } from './load.js';
import { CHAT_PATH } from './targets.js';

const run = promisify(execFile);

/**
 * wrk for the scale bench, whose load needs what bench/load.ts's `wrk` does not give: a request
 * function of its own (one Authorization header per request, from 10,000). The scripts are plain
 * Lua; the requests they send are formatted once, in `init`, so that the load generator's core
 * does the same small work per request whatever the number of tokens.
 */

export interface WrkCount {
  requests: number;
  requestsPerSecond: number;
  failures: number;
}

/** The fixed part of every scale script: method, body, content type. */
function preamble(): string {
  return `wrk.method = "POST"\nwrk.body = ${JSON.stringify(chatBody(false))}\nwrk.headers["content-type"] = "application/json"\n`;
}

/** A script sending `headers` on every request, then `requestFunction` (a session mix's), if any. */
export function fixedHeadersScript(path: string, headers: Record<string, string>, requestFunction = ''): void {
  const lines = Object.entries(headers).map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  writeFileSync(path, `${preamble()}${lines.join('\n')}\n${requestFunction}`);
}

/**
 * A script that takes the bearer tokens in turn, one per request, from token `start` (wrapping
 * round): successive runs go on where the last stopped (`start` + its request count), so that a
 * warm-up of as many requests as tokens has used every one of them.
 */
export function rotatingTokensScript(path: string, secrets: readonly string[], start: number): void {
  writeFileSync(
    path,
    `${preamble()}local secrets = {
${secrets.map((secret) => `  ${JSON.stringify(secret)},`).join('\n')}
}
local requests = {}
local next_index = ${start % secrets.length}
init = function(args)
  for index, secret in ipairs(secrets) do
    wrk.headers["authorization"] = "Bearer " .. secret
    requests[index] = wrk.format()
  end
end
request = function()
  next_index = next_index % #requests + 1
  return requests[next_index]
end
`,
  );
}

/**
 * Closed-loop load from wrk (one thread, pinned to the load core) with the given script. A run
 * that counted no request at all (seen now and then with 1-s runs on a loaded host, the servers
 * answering) is run again, twice at most, rather than taken as a zero.
 */
export async function wrkScript(origin: string, script: string, connections: number, seconds: number): Promise<WrkCount> {
  for (let attempt = 1; ; attempt++) {
    const count = await wrkOnce(origin, script, connections, seconds);
    if (count.requests > 0 || attempt === 3) return count;
  }
}

async function wrkOnce(origin: string, script: string, connections: number, seconds: number): Promise<WrkCount> {
  const { stdout, stderr } = await run('taskset', ['-c', LOAD_CORE, 'wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '-s', script, `${origin}${CHAT_PATH}`], {
    maxBuffer: 1 << 20,
  });
  const number = (pattern: RegExp) => Number(pattern.exec(stdout)?.[1] ?? Number.NaN);
  if (!Number.isFinite(number(/(\d+) requests in/)))
    throw new Error(`wrk -s ${script}: no request count in its output: ${stdout.slice(-300)} ${stderr.slice(-300)}`);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  return {
    requests: number(/(\d+) requests in/),
    requestsPerSecond: number(/Requests\/sec:\s+([\d.]+)/),
    failures: (number(/Non-2xx or 3xx responses: (\d+)/) || 0) + (socket === null ? 0 : socket.slice(1).reduce((sum, value) => sum + Number(value), 0)),
  };
}
