import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { ChatStreamEvent } from '../services/index.js';
import { RequestRecord } from '../usage/index.js';
import { writeEventStream } from './event-stream.js';
import { PausedStreams } from './paused-streams.js';

/** Enough of a ServerResponse to see what was written, and in what order with the event loop's turns. */
function recordingResponse(log: string[]): ServerResponse {
  return {
    destroyed: false,
    writeHead: () => undefined,
    write: (chunk: string) => {
      log.push(chunk.trim());
      return true;
    },
    end: (chunk: string) => {
      log.push(chunk.trim());
    },
  } as unknown as ServerResponse;
}

/** Events that are all there at once, as when an upstream sends several in one read. */
async function* arrivedTogether(count: number): AsyncGenerator<ChatStreamEvent> {
  for (let index = 1; index <= count; index++) yield { data: `{"n":${index}}`, usage: null, usageOnly: false, text: '' };
}

describe('writeEventStream', () => {
  it('lets the first event leave before the ones that arrived with it are written', async () => {
    const log: string[] = [];
    // A turn of the event loop: Node sends what a response wrote when its socket is uncorked, a tick later.
    setImmediate(() => log.push('turn'));
    const pausedStreams = new PausedStreams(1_000, () => ({ name: 'test', size: 8 }), { warn: () => undefined });
    await writeEventStream(recordingResponse(log), [], arrivedTogether(3), new RequestRecord('req_test', 'chat.completions'), pausedStreams, () => undefined);
    expect(log).toEqual(['data: {"n":1}', 'turn', 'data: {"n":2}', 'data: {"n":3}', 'data: [DONE]']);
  });
});
