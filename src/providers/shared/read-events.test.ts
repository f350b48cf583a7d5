import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/index.js';
import { readEvents, type EventReader } from './read-events.js';
import type { ServerSentEvent } from './server-sent-events.js';

/** A body that says how it was read, and whether it was closed. */
class FakeBody implements AsyncIterableIterator<Buffer> {
  closed = false;
  private index = 0;
  constructor(private readonly chunks: Array<Buffer | Error>) {}
  next(): Promise<IteratorResult<Buffer>> {
    const chunk = this.chunks[this.index++];
    if (chunk === undefined) return Promise.resolve({ done: true, value: undefined });
    if (chunk instanceof Error) return Promise.reject(chunk);
    return Promise.resolve({ done: false, value: chunk });
  }
  return(): Promise<IteratorResult<Buffer>> {
    this.closed = true;
    return Promise.resolve({ done: true, value: undefined });
  }
  [Symbol.asyncIterator](): this {
    return this;
  }
}

/** Each event's data twice (through `more`), `stop` ends the stream, and the end says `end`. */
class EchoReader implements EventReader<string> {
  done = false;
  bytes = 0;
  private pending: string[] = [];
  read(event: ServerSentEvent): string | undefined {
    if (event.data === 'stop') {
      this.done = true;
      return 'stopped';
    }
    this.pending.push(`${event.data}'`);
    return event.data;
  }
  more(): string | undefined {
    return this.pending.shift();
  }
  end(): string | undefined {
    return 'end';
  }
  received(chunk: Buffer): void {
    this.bytes += chunk.length;
  }
}

async function collect(items: AsyncIterable<string>): Promise<string[]> {
  const seen: string[] = [];
  for await (const item of items) seen.push(item);
  return seen;
}

describe('readEvents', () => {
  it('gives what the reader makes of each event, its further items, then its end; and closes the body', async () => {
    const body = new FakeBody([Buffer.from('data: a\n\nda'), Buffer.from('ta: b\n\n'), Buffer.from('data: c')]);
    const reader = new EchoReader();
    expect(await collect(readEvents(body, reader, 'up'))).toEqual(['a', "a'", 'b', "b'", 'end']);
    expect(reader.bytes).toBe(25);
    expect(body.closed).toBe(true);
  });

  it('stops at the event the reader says is the last, and reads nothing after it', async () => {
    const body = new FakeBody([Buffer.from('data: a\n\ndata: stop\n\ndata: b\n\n'), Buffer.from('data: c\n\n')]);
    expect(await collect(readEvents(body, new EchoReader(), 'up'))).toEqual(['a', "a'", 'stopped']);
    expect(body.closed).toBe(true);
  });

  it('classifies a transport failure and closes the body', async () => {
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const body = new FakeBody([Buffer.from('data: a\n\n'), reset]);
    const seen: string[] = [];
    const error = await (async () => {
      for await (const item of readEvents(body, new EchoReader(), 'up')) seen.push(item);
    })().catch((caught: unknown) => caught);
    expect(seen).toEqual(['a', "a'"]);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ code: 'upstream_error', message: 'Upstream up could not be reached (ECONNRESET).' });
    expect(body.closed).toBe(true);
  });

  it('passes on what the reader throws, and closes the body when the caller stops early', async () => {
    const refusing: EventReader<string> = {
      done: false,
      read: () => {
        throw new GatewayError('upstream_invalid_response', 'not JSON');
      },
      end: () => undefined,
    };
    await expect(collect(readEvents(new FakeBody([Buffer.from('data: x\n\n')]), refusing, 'up'))).rejects.toMatchObject({
      code: 'upstream_invalid_response',
      message: 'not JSON',
    });
    const body = new FakeBody([Buffer.from('data: a\n\ndata: b\n\n')]);
    for await (const item of readEvents(body, new EchoReader(), 'up')) if (item === 'a') break;
    expect(body.closed).toBe(true);
  });

  it('fails an event larger than maxEventBytes', async () => {
    const body = new FakeBody([Buffer.from(`data: ${'x'.repeat(64)}\n\n`)]);
    await expect(collect(readEvents(body, new EchoReader(), 'up', 16))).rejects.toMatchObject({ code: 'upstream_invalid_response' });
  });
});
