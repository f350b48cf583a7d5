import { createServer, type ServerResponse } from 'node:http';

/**
 * The upstream every proxy in the benchmark talks to: as cheap as a Node server can be, so that
 * what is measured is the proxies. A ~1 KB chat completion, a ~20-chunk SSE stream, and a slow
 * stream (a chunk every 250 ms, 5 s in all) for the concurrent-streams memory test; at `…/responses`
 * the Codex backend's event stream, fast or slow, for the native passthrough; at `/v1/messages`
 * Anthropic's event stream of the same ~20-delta answer, or its message, for `/v1/messages`.
 */
const port = Number(process.argv[2] ?? 0);

const completion = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench000000000000000000000000',
    object: 'chat.completion',
    created: 1_727_888_631,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content:
            'Hello! This is a benchmark answer of realistic length. It carries a few sentences so that the body is close to one kilobyte, as a short chat answer is. Proxies must pass it on untouched, quickly, and without buffering more than they need to. The quick brown fox jumps over the lazy dog, twice over, to pad it out a little further.',
          refusal: null,
        },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: 12,
      completion_tokens: 80,
      total_tokens: 92,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
    system_fingerprint: 'fp_f85bea6784',
  }),
);

function chunk(content: string | null, finish: string | null, usage: boolean): string {
  const choices = content === null && finish === null ? [] : [{ index: 0, delta: content === null ? {} : { content }, logprobs: null, finish_reason: finish }];
  return `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_727_888_631, model: 'gpt-4o-mini-2024-07-18', choices, usage: usage ? { prompt_tokens: 12, completion_tokens: 19, total_tokens: 31 } : null })}\n\n`;
}

const words = Array.from({ length: 19 }, (_, index) => ` word${index}`);
const streamEvents = [...words.map((word) => chunk(word, null, false)), chunk(null, 'stop', false)];
const usageEvent = chunk(null, null, true);

/** The Codex backend's stream (the native passthrough): the event sequence of a ~20-delta answer. */
function responsesEvent(type: string, fields: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
}
const responseId = 'resp_bench000000000000000000000000';
const responsesEvents = [
  responsesEvent('response.created', {
    sequence_number: 0,
    response: { id: responseId, object: 'response', status: 'in_progress', model: 'gpt-5.1-codex', output: [] },
  }),
  responsesEvent('response.in_progress', {
    sequence_number: 1,
    response: { id: responseId, object: 'response', status: 'in_progress', model: 'gpt-5.1-codex', output: [] },
  }),
  responsesEvent('response.output_item.added', {
    sequence_number: 2,
    output_index: 0,
    item: { id: 'msg_bench', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
  }),
  ...words.map((word, index) =>
    responsesEvent('response.output_text.delta', { sequence_number: 3 + index, item_id: 'msg_bench', output_index: 0, content_index: 0, delta: word }),
  ),
  responsesEvent('response.output_item.done', {
    sequence_number: 22,
    output_index: 0,
    item: {
      id: 'msg_bench',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: words.join(''), annotations: [] }],
    },
  }),
  responsesEvent('response.completed', {
    sequence_number: 23,
    response: {
      id: responseId,
      object: 'response',
      status: 'completed',
      model: 'gpt-5.1-codex',
      output: [],
      usage: {
        input_tokens: 1200,
        input_tokens_details: { cached_tokens: 1024 },
        output_tokens: 19,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 1219,
      },
    },
  }),
];

/** Anthropic's stream of the same answer: the events and order of a recorded text stream. */
function messagesEvent(type: string, fields: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;
}
const anthropicMessage = {
  id: 'msg_bench0000000000000000000',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-20250514',
  content: [] as unknown[],
  stop_reason: null,
  stop_sequence: null,
  usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
};
const messagesEvents = [
  messagesEvent('message_start', { message: anthropicMessage }),
  messagesEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  messagesEvent('ping', {}),
  ...words.map((word) => messagesEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: word } })),
  messagesEvent('content_block_stop', { index: 0 }),
  messagesEvent('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 19 } }),
  messagesEvent('message_stop', {}),
];
const messageJson = Buffer.from(
  JSON.stringify({
    ...anthropicMessage,
    content: [{ type: 'text', text: words.join('') }],
    stop_reason: 'end_turn',
    usage: { ...anthropicMessage.usage, output_tokens: 19 },
  }),
);

function answerMessages(response: ServerResponse, stream: boolean): void {
  if (!stream) {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': messageJson.length });
    response.end(messageJson);
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  for (const event of messagesEvents) response.write(event);
  response.end();
}

function streamResponses(response: ServerResponse, slow: boolean): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'x-codex-primary-used-percent': '12', 'x-codex-turn-state': 'bench-turn-state' });
  if (!slow) {
    for (const event of responsesEvents) response.write(event);
    response.end();
    return;
  }
  let sent = 0;
  const timer = setInterval(() => {
    if (response.destroyed) return clearInterval(timer);
    if (sent < responsesEvents.length) response.write(responsesEvents[sent++]);
    else {
      clearInterval(timer);
      response.end();
    }
  }, 250);
}

const server = createServer((request, response) => {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    const body = Buffer.concat(parts).toString();
    if (request.url?.endsWith('/responses') === true) return streamResponses(response, body.includes('slow-stream'));
    if (request.url === '/v1/messages') return answerMessages(response, body.includes('"stream":true'));
    if (!body.includes('"stream":true')) {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': completion.length });
      response.end(completion);
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const withUsage = body.includes('"include_usage":true');
    if (!body.includes('slow-stream')) {
      for (const event of streamEvents) response.write(event);
      if (withUsage) response.write(usageEvent);
      response.end('data: [DONE]\n\n');
      return;
    }
    let sent = 0;
    const timer = setInterval(() => {
      if (response.destroyed) return clearInterval(timer);
      if (sent < streamEvents.length) response.write(streamEvents[sent++]);
      else {
        clearInterval(timer);
        if (withUsage) response.write(usageEvent);
        response.end('data: [DONE]\n\n');
      }
    }, 250);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : port })}\n`);
});
