import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/index.js';
import { RequestRecord } from '../usage/index.js';
import { PausedStreams } from './paused-streams.js';
import { responsesErrorEvent } from '../services/index.js';
import { writeNamedEventStream } from './named-event-stream.js';

/** Enough of a ServerResponse to see what was written, the event loop's turns included. */
function recordingResponse(log: string[]): ServerResponse {
  return {
    destroyed: false,
    writeHead: () => undefined,
    write: (chunk: string | Buffer) => {
      log.push(chunk.toString());
      return true;
    },
    end: (chunk?: string) => {
      log.push(chunk ?? '<end>');
    },
  } as unknown as ServerResponse;
}

const pausedStreams = new PausedStreams(1_000, () => ({ name: 'test', size: 8 }), { warn: () => undefined });
const told = (error: unknown) => new GatewayError('upstream_error', `told: ${(error as Error).message}`);

async function* bytes(pieces: string[], failure?: Error): AsyncGenerator<Buffer> {
  for (const piece of pieces) yield Buffer.from(piece);
  if (failure !== undefined) throw failure;
}

describe('writeNamedEventStream', () => {
  it('frames converted events as event/data pairs, without [DONE], the first one leaving on its own turn', async () => {
    const log: string[] = [];
    setImmediate(() => log.push('turn'));
    async function* events() {
      yield { event: 'response.created', data: '{"n":1}' };
      yield { event: 'response.completed', data: '{"n":2}' };
    }
    await writeNamedEventStream(
      recordingResponse(log),
      [],
      { kind: 'events', events: events() },
      new RequestRecord('req_test', 'responses'),
      pausedStreams,
      told,
      responsesErrorEvent,
    );
    expect(log).toEqual(['event: response.created\ndata: {"n":1}\n\n', 'turn', 'event: response.completed\ndata: {"n":2}\n\n', '<end>']);
  });

  it("passes an upstream's bytes on in whole events, and ends a failed stream with an error event", async () => {
    const log: string[] = [];
    const body = bytes(['event: response.created\ndata: {}\n', '\n'], new Error('reset'));
    await writeNamedEventStream(
      recordingResponse(log),
      [],
      { kind: 'bytes', body },
      new RequestRecord('req_test', 'responses'),
      pausedStreams,
      told,
      responsesErrorEvent,
    );
    expect(log[0]).toBe('event: response.created\ndata: {}\n\n');
    const last = log.at(-1) as string;
    expect(last.startsWith('event: error\ndata: ')).toBe(true);
    expect(JSON.parse(last.split('data: ')[1] as string)).toEqual({
      type: 'error',
      code: 'upstream_error',
      message: 'told: reset',
      param: null,
      error: { type: 'upstream_error', code: 'upstream_error', message: 'told: reset', param: null },
    });
  });

  it('drops an event the upstream left unfinished, so that the error is an event of its own', async () => {
    const log: string[] = [];
    const body = bytes(['event: response.output_text.delta\ndata: {"del'], new Error('reset'));
    await writeNamedEventStream(
      recordingResponse(log),
      [],
      { kind: 'bytes', body },
      new RequestRecord('req_test', 'responses'),
      pausedStreams,
      told,
      responsesErrorEvent,
    );
    expect(log).toHaveLength(1);
    expect(log[0]?.startsWith('event: error\n')).toBe(true);
  });
});
