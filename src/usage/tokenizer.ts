import { Worker } from 'node:worker_threads';
import { workerScript } from '../runtime/worker-script.js';

/**
 * Counts o200k_base tokens of a text, or the sum over several texts (counted apart, in one trip to
 * the tokenizer thread); stops as soon as the count passes `limit` (and returns that count).
 */
export type CountTokens = (texts: string | readonly string[], limit?: number) => Promise<number>;

export interface CountRequest {
  id: number;
  texts: readonly string[];
  /** Infinity for no limit. */
  limit: number;
}

export type CountReply = { id: number; count: number } | { id: number; error: string };

interface Pending {
  resolve: (count: number) => void;
  reject: (error: Error) => void;
}

let worker: Worker | null = null;
const pending = new Map<number, Pending>();
let nextId = 1;

/**
 * Tokens are counted on a thread of their own (tokenizer-worker.ts), started on the first count:
 * loading the tables would hold the event loop ~0.4 s, and counting a long prompt tens of ms, for
 * every request in flight. The thread counts in time linear in the text (token-segments.ts) and
 * one text after the other; it does not keep the process alive.
 */
export const countTokens: CountTokens = (text, limit) =>
  new Promise((resolve, reject) => {
    const thread = tokenizerThread();
    const id = nextId++;
    pending.set(id, { resolve, reject });
    const request: CountRequest = { id, texts: typeof text === 'string' ? [text] : text, limit: limit ?? Number.POSITIVE_INFINITY };
    thread.postMessage(request);
  });

function tokenizerThread(): Worker {
  if (worker !== null) return worker;
  const thread = new Worker(workerScript(import.meta.url, './tokenizer-worker.js'));
  thread.on('message', (reply: CountReply) => {
    const call = pending.get(reply.id);
    if (call === undefined) return;
    pending.delete(reply.id);
    if ('error' in reply) call.reject(new Error(`token count failed: ${reply.error}`));
    else call.resolve(reply.count);
  });
  // A thread that dies fails what it had; the next count starts another.
  const fail = (error: Error): void => {
    if (worker === thread) worker = null;
    for (const call of pending.values()) call.reject(error);
    pending.clear();
  };
  thread.on('error', fail);
  thread.on('exit', (code) => fail(new Error(`the tokenizer thread exited (code ${code})`)));
  // After the listeners: adding a `message` listener refs the thread again.
  thread.unref();
  worker = thread;
  return thread;
}
