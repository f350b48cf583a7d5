// A tiny OpenAI-compatible upstream for .ci/quick-start's production install: POST
// /v1/chat/completions answers "upstream heard: <the last message>", streamed or not, to the one key
// it is given (401 otherwise). It prints its base URL on stdout once it listens.
import { createServer } from 'node:http';

const key = process.argv[2] ?? 'ci-upstream-key';

const server = createServer(async (request, response) => {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  const answer = (status, body) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  if (request.headers.authorization !== `Bearer ${key}`) {
    return answer(401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } });
  }
  if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
    return answer(404, { error: { message: `no ${request.method} ${request.url} here`, type: 'invalid_request_error' } });
  }
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const content = `upstream heard: ${body.messages.at(-1).content}`;
  const usage = { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 };
  const head = { id: 'chatcmpl-ci', created: Math.floor(Date.now() / 1000), model: body.model };
  if (!body.stream) {
    return answer(200, { ...head, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }], usage });
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const send = (chunk) => response.write(`data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', ...chunk })}\n\n`);
  send({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
  for (const word of content.split(/(?= )/)) send({ choices: [{ index: 0, delta: { content: word }, finish_reason: null }] });
  send({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
  if (body.stream_options?.include_usage) send({ choices: [], usage });
  response.end('data: [DONE]\n\n');
});

server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}/v1`));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close(() => process.exit(0)));
