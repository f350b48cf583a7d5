import { request } from 'undici';

/** What became of one request of the load. */
export interface LoadOutcome {
  readonly startedAt: number;
  endedAt: number;
  status: number;
  /** The gateway's `X-Request-Id`; null when no gateway answered (nginx's own 502). */
  requestId: string | null;
  stream: boolean;
  /** For a stream: whether it ended with `data: [DONE]`; for a plain answer: whether its body was whole JSON. */
  complete: boolean;
  error: string | null;
}

export interface SteadyLoad {
  readonly outcomes: readonly LoadOutcome[];
  /** Stops sending and resolves with every outcome once the requests under way have ended. */
  stop(): Promise<LoadOutcome[]>;
}

/**
 * Chat completions sent at a steady rate through `url` (nginx), every `streamEvery`-th one a
 * stream, each on a connection of its own (a client's retries or kept-alive connections cannot
 * hide a failure, and nginx's graceful reloads never race a request on a closing connection).
 */
export function startSteadyLoad(url: string, token: string, options: { perSecond: number; streamEvery: number; model: string }): SteadyLoad {
  const outcomes: LoadOutcome[] = [];
  const pending = new Set<Promise<void>>();
  let sent = 0;
  const send = (): void => {
    const stream = sent % options.streamEvery === options.streamEvery - 1;
    sent++;
    const outcome: LoadOutcome = { startedAt: performance.now(), endedAt: 0, status: 0, requestId: null, stream, complete: false, error: null };
    outcomes.push(outcome);
    const done = (async () => {
      try {
        const answer = await request(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' },
          body: JSON.stringify({ model: options.model, stream, messages: [{ role: 'user', content: `load ${sent}` }] }),
          reset: true,
        });
        outcome.status = answer.statusCode;
        const id = answer.headers['x-request-id'];
        outcome.requestId = typeof id === 'string' ? id : null;
        const body = await answer.body.text();
        outcome.complete = stream ? body.trimEnd().endsWith('data: [DONE]') : isJson(body);
      } catch (error) {
        outcome.error = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      } finally {
        outcome.endedAt = performance.now();
      }
    })();
    pending.add(done);
    void done.then(() => pending.delete(done));
  };
  const timer = setInterval(send, 1_000 / options.perSecond);
  return {
    outcomes,
    stop: async () => {
      clearInterval(timer);
      while (pending.size > 0) await Promise.all([...pending]);
      return outcomes;
    },
  };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The outcomes that are not a whole 200 answer, for a failure message. */
export function failed(outcomes: readonly LoadOutcome[]): LoadOutcome[] {
  return outcomes.filter((outcome) => outcome.status !== 200 || !outcome.complete);
}
