import { parentPort } from 'node:worker_threads';
import { countTokens as encodeCount } from 'gpt-tokenizer/encoding/o200k_base';
import { countInSegments } from './token-segments.js';
import type { CountReply, CountRequest } from './tokenizer.js';

/**
 * The tokenizer thread: o200k_base's tables (~60 MB, ~0.4 s to load) and every count live here,
 * off the event loop. Special-token text (`<|endoftext|>`) in a caller's input is counted as the
 * text it is, never refused.
 */
if (parentPort === null) throw new Error('tokenizer-worker must run as a worker thread');
const port = parentPort;
const options = { disallowedSpecial: new Set<string>() };
const encode = (text: string): number => encodeCount(text, options);

port.on('message', ({ id, texts, limit }: CountRequest) => {
  let reply: CountReply;
  try {
    let count = 0;
    for (const text of texts) {
      count += countInSegments(encode, text, limit - count);
      if (count > limit) break;
    }
    reply = { id, count };
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});
