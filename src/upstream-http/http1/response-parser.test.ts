import { describe, expect, it } from 'vitest';
import { Http1Error, Http1ProtocolError } from './http1-errors.js';
import { MAX_HEAD_BYTES, ResponseHead, ResponseParser, type ResponseSink } from './response-parser.js';

/** Records everything a parser hands on, in order. */
class RecordingSink implements ResponseSink {
  readonly events: string[] = [];
  readonly heads: { statusCode: number; head: ResponseHead }[] = [];
  readonly bodyChunks: Buffer[] = [];
  endCount = 0;

  onHead(statusCode: number, head: ResponseHead): void {
    this.events.push(`head ${statusCode}`);
    this.heads.push({ statusCode, head });
  }

  onBody(chunk: Buffer): void {
    this.events.push('body');
    // Copied: a parser may hand on a view of the caller's buffer.
    this.bodyChunks.push(Buffer.from(chunk));
  }

  onEnd(): void {
    this.events.push('end');
    this.endCount++;
  }

  get body(): Buffer {
    return Buffer.concat(this.bodyChunks);
  }

  get statusCode(): number | undefined {
    return this.heads[0]?.statusCode;
  }

  get head(): ResponseHead {
    const first = this.heads[0];
    if (first === undefined) throw new Error('no head was recorded');
    return first.head;
  }
}

interface ParsedResponse {
  sink: RecordingSink;
  parser: ResponseParser;
}

function parse(...chunks: (string | Buffer)[]): ParsedResponse {
  const sink = new RecordingSink();
  const parser = new ResponseParser(sink);
  for (const chunk of chunks) parser.execute(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk);
  return { sink, parser };
}

function parseFailure(...chunks: (string | Buffer)[]): Http1ProtocolError {
  const sink = new RecordingSink();
  const parser = new ResponseParser(sink);
  try {
    for (const chunk of chunks) parser.execute(typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk);
  } catch (error) {
    expect(error).toBeInstanceOf(Http1ProtocolError);
    expect(error).toBeInstanceOf(Http1Error);
    expect((error as Http1ProtocolError).code).toBe('HTTP1_PROTOCOL');
    return error as Http1ProtocolError;
  }
  throw new Error('expected the parser to throw');
}

interface Outcome {
  statusCode: number | undefined;
  headCount: number;
  headerText: string | undefined;
  body: string;
  endCount: number;
  done: boolean;
  keepAlive: boolean;
}

function outcome({ sink, parser }: ParsedResponse): Outcome {
  return {
    statusCode: sink.statusCode,
    headCount: sink.heads.length,
    headerText: sink.heads[0]?.head.text,
    body: sink.body.toString('latin1'),
    endCount: sink.endCount,
    done: parser.done,
    keepAlive: parser.keepAlive,
  };
}

/** Feeds `response` split in two at every offset, then one byte at a time, and checks every outcome against `expected`. */
function expectSameOutcomeWhateverTheSplit(response: string, expected: Outcome): void {
  const bytes = Buffer.from(response, 'latin1');
  for (let offset = 0; offset <= bytes.length; offset++) {
    const split = outcome(parse(bytes.subarray(0, offset), bytes.subarray(offset)));
    expect(split, `split at offset ${offset}`).toEqual(expected);
  }
  const oneByteAtATime = outcome(parse(...Array.from(bytes, (byte) => Buffer.from([byte]))));
  expect(oneByteAtATime, 'fed one byte at a time').toEqual(expected);
}

const CONTENT_LENGTH_RESPONSE = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 17\r\nX-Request-Id: abc\r\n\r\n{"answer": "yes"}';

describe('ResponseParser with a Content-Length body', () => {
  it('hands on the status, the head, the body and one end, in order', () => {
    const { sink, parser } = parse(CONTENT_LENGTH_RESPONSE);
    expect(sink.events).toEqual(['head 200', 'body', 'end']);
    expect(sink.statusCode).toBe(200);
    expect(sink.head.headers).toEqual({ 'content-type': 'application/json', 'content-length': '17', 'x-request-id': 'abc' });
    expect(sink.body.toString()).toBe('{"answer": "yes"}');
    expect(parser.done).toBe(true);
    expect(parser.keepAlive).toBe(true);
    expect(parser.keepAliveHintMs).toBeNull();
    expect(parser.receivedBytes).toBe(Buffer.byteLength(CONTENT_LENGTH_RESPONSE));
  });

  it('is not done before the last body byte', () => {
    const { sink, parser } = parse(CONTENT_LENGTH_RESPONSE.slice(0, -1));
    expect(parser.done).toBe(false);
    expect(sink.endCount).toBe(0);
    expect(sink.body.toString()).toBe('{"answer": "yes"');
  });

  it('ends right after the head for Content-Length: 0', () => {
    const { sink, parser } = parse('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
    expect(sink.events).toEqual(['head 200', 'end']);
    expect(parser.done).toBe(true);
  });

  it('accepts repeated Content-Length headers that agree', () => {
    const { sink } = parse('HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\nok');
    expect(sink.body.toString()).toBe('ok');
    expect(sink.endCount).toBe(1);
  });

  it('gives the same result whatever the chunk boundaries, down to one byte at a time', () => {
    const expected = outcome(parse(CONTENT_LENGTH_RESPONSE));
    expect(expected).toEqual({
      statusCode: 200,
      headCount: 1,
      headerText: expect.stringContaining('X-Request-Id: abc') as unknown as string,
      body: '{"answer": "yes"}',
      endCount: 1,
      done: true,
      keepAlive: true,
    });
    expectSameOutcomeWhateverTheSplit(CONTENT_LENGTH_RESPONSE, expected);
  });
});

const CHUNKED_RESPONSE =
  'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n' +
  '5;name=value\r\nhello\r\n' +
  '1 ; quoted="a;b"\r\n,\r\n' +
  'A\r\n world!!!!\r\n' +
  '0;last\r\nX-Trailer: one\r\nX-Other-Trailer: two\r\n\r\n';

describe('ResponseParser with a chunked body', () => {
  it('decodes chunks with extensions and drops the trailers', () => {
    const { sink, parser } = parse(CHUNKED_RESPONSE);
    expect(sink.statusCode).toBe(200);
    expect(sink.body.toString()).toBe('hello, world!!!!');
    expect(sink.endCount).toBe(1);
    expect(sink.events.at(-1)).toBe('end');
    expect(parser.done).toBe(true);
    expect(parser.keepAlive).toBe(true);
    expect(sink.head.headers['x-trailer']).toBeUndefined();
  });

  it('gives the same result whatever the chunk boundaries, down to one byte at a time', () => {
    const expected = outcome(parse(CHUNKED_RESPONSE));
    expect(expected.body).toBe('hello, world!!!!');
    expect(expected.endCount).toBe(1);
    expectSameOutcomeWhateverTheSplit(CHUNKED_RESPONSE, expected);
  });

  it('reads upper- and lower-case hexadecimal sizes', () => {
    const data = 'x'.repeat(0x1f);
    const { sink } = parse(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1F\r\n${data}\r\n1f\r\n${data}\r\n0\r\n\r\n`);
    expect(sink.body.toString()).toBe(data + data);
    expect(sink.endCount).toBe(1);
  });

  it('is not done until the blank line after the last chunk', () => {
    const { sink, parser } = parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n');
    expect(parser.done).toBe(false);
    expect(sink.endCount).toBe(0);
    parser.execute(Buffer.from('\r\n'));
    expect(parser.done).toBe(true);
    expect(sink.endCount).toBe(1);
  });

  it('reads a non-chunked transfer coding until the connection closes', () => {
    const { sink, parser } = parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nsome bytes');
    expect(parser.readsUntilClose).toBe(true);
    expect(parser.keepAlive).toBe(false);
    parser.end();
    expect(sink.body.toString()).toBe('some bytes');
    expect(sink.endCount).toBe(1);
  });
});

describe('ResponseParser line endings and interim responses', () => {
  it('accepts bare LF line endings in the head and in a chunked body', () => {
    const lengthFramed = parse('HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: 3\n\nabc');
    expect(lengthFramed.sink.statusCode).toBe(200);
    expect(lengthFramed.sink.head.headers).toEqual({ 'content-type': 'text/plain', 'content-length': '3' });
    expect(lengthFramed.sink.body.toString()).toBe('abc');
    expect(lengthFramed.sink.endCount).toBe(1);

    const chunked = 'HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n2;x=y\nde\n0\nTrailer: t\n\n';
    const expected = outcome(parse(chunked));
    expect(expected.body).toBe('abcde');
    expect(expected.endCount).toBe(1);
    expectSameOutcomeWhateverTheSplit(chunked, expected);
  });

  it('skips a 100 Continue that arrives in the same chunk as the real response', () => {
    const response = 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\nLocation: /things/1\r\n\r\nok';
    const { sink, parser } = parse(response);
    expect(sink.events).toEqual(['head 201', 'body', 'end']);
    expect(sink.head.headers).toEqual({ 'content-length': '2', location: '/things/1' });
    expect(sink.body.toString()).toBe('ok');
    expect(parser.done).toBe(true);
    expectSameOutcomeWhateverTheSplit(response, outcome({ sink, parser }));
  });

  it('skips several interim responses, headers included (103 Early Hints)', () => {
    const { sink } = parse(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n!',
    );
    expect(sink.heads.map(({ statusCode }) => statusCode)).toEqual([200]);
    expect(sink.head.headers['link']).toBeUndefined();
    expect(sink.body.toString()).toBe('!');
  });

  it('refuses 101 Switching Protocols', () => {
    expect(parseFailure('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n').message).toMatch(/switched protocols/);
  });

  it.each([204, 304])('reads no body for a %i even with a Content-Length', (statusCode) => {
    const { sink, parser } = parse(`HTTP/1.1 ${statusCode} Whatever\r\nContent-Length: 5\r\n\r\n`);
    expect(sink.events).toEqual([`head ${statusCode}`, 'end']);
    expect(parser.done).toBe(true);
    expect(parser.keepAlive).toBe(true);
    // The five bytes it announced are not this response's: they would be the start of another.
    expect(() => parser.execute(Buffer.from('hello'))).toThrow(Http1ProtocolError);
  });
});

describe('ResponseParser connection reuse', () => {
  it('keeps an HTTP/1.1 connection open by default', () => {
    expect(parse('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n').parser.keepAlive).toBe(true);
  });

  it('does not keep an HTTP/1.0 connection open without Connection: keep-alive', () => {
    const { parser, sink } = parse('HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok');
    expect(sink.body.toString()).toBe('ok');
    expect(parser.done).toBe(true);
    expect(parser.keepAlive).toBe(false);
  });

  it('keeps an HTTP/1.0 connection open with Connection: keep-alive and a length', () => {
    expect(parse('HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok').parser.keepAlive).toBe(true);
  });

  it.each(['close', 'Close', 'upgrade, close', 'close , keep-alive'])('does not keep the connection open with Connection: %s', (value) => {
    const { parser } = parse(`HTTP/1.1 200 OK\r\nConnection: ${value}\r\nContent-Length: 2\r\n\r\nok`);
    expect(parser.done).toBe(true);
    expect(parser.keepAlive).toBe(false);
  });

  it('reads Keep-Alive: timeout=5 as a 5000 ms hint', () => {
    expect(parse('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\nContent-Length: 0\r\n\r\n').parser.keepAliveHintMs).toBe(5_000);
    expect(parse('HTTP/1.1 200 OK\r\nkeep-alive: max=100, timeout=30\r\nContent-Length: 0\r\n\r\n').parser.keepAliveHintMs).toBe(30_000);
    expect(parse('HTTP/1.1 200 OK\r\nKeep-Alive: max=100\r\nContent-Length: 0\r\n\r\n').parser.keepAliveHintMs).toBeNull();
  });

  it('reads a body with no length until the connection closes, and finishes it on end()', () => {
    const { sink, parser } = parse('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello', ' world');
    expect(parser.readsUntilClose).toBe(true);
    expect(parser.done).toBe(false);
    expect(parser.keepAlive).toBe(false);
    expect(sink.endCount).toBe(0);
    parser.end();
    expect(parser.done).toBe(true);
    expect(sink.body.toString()).toBe('hello world');
    expect(sink.events).toEqual(['head 200', 'body', 'body', 'end']);
  });

  it('reads a body delimited by the close that is empty', () => {
    const { sink, parser } = parse('HTTP/1.1 200 OK\r\n\r\n');
    parser.end();
    expect(sink.events).toEqual(['head 200', 'end']);
  });

  it('lets end() pass once a response is complete', () => {
    const { sink, parser } = parse(CONTENT_LENGTH_RESPONSE);
    expect(() => parser.end()).not.toThrow();
    expect(sink.endCount).toBe(1);
  });

  it('reads a body with both Transfer-Encoding: chunked and Content-Length as chunked, and never reuses the connection', () => {
    const { sink, parser } = parse('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
    expect(sink.body.toString()).toBe('hello');
    expect(sink.endCount).toBe(1);
    expect(parser.done).toBe(true);
    expect(parser.keepAlive).toBe(false);
  });

  it('reads a second response after reset()', () => {
    const sink = new RecordingSink();
    const parser = new ResponseParser(sink);
    parser.execute(Buffer.from('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\nConnection: close\r\nContent-Length: 3\r\n\r\none'));
    expect(parser.done).toBe(true);
    expect(parser.keepAlive).toBe(false);
    expect(parser.keepAliveHintMs).toBe(5_000);
    expect(() => parser.execute(Buffer.from('H'))).toThrow(Http1ProtocolError);

    parser.reset();
    expect(parser.done).toBe(false);
    expect(parser.receivedBytes).toBe(0);
    const second = 'HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n';
    parser.execute(Buffer.from(second));
    expect(sink.heads.map(({ statusCode }) => statusCode)).toEqual([200, 404]);
    expect(sink.body.toString()).toBe('onetwo');
    expect(sink.endCount).toBe(2);
    expect(parser.done).toBe(true);
    expect(parser.keepAlive).toBe(true);
    expect(parser.keepAliveHintMs).toBeNull();
    expect(parser.receivedBytes).toBe(second.length);
  });

  it('resets a response cut in the middle of its head', () => {
    const sink = new RecordingSink();
    const parser = new ResponseParser(sink);
    parser.execute(Buffer.from('HTTP/1.1 500 Internal'));
    parser.reset();
    parser.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'));
    expect(sink.heads.map(({ statusCode }) => statusCode)).toEqual([200]);
    expect(parser.done).toBe(true);
  });
});

describe('ResponseParser refuses malformed responses', () => {
  it('throws on end() in the middle of a Content-Length body', () => {
    const { sink, parser } = parse('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc');
    expect(() => parser.end()).toThrow(Http1ProtocolError);
    expect(() => parser.end()).toThrow(/closed the connection before the response was complete/);
    expect(sink.endCount).toBe(0);
  });

  it('throws on end() in the middle of a chunked body or of the head', () => {
    expect(() => parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel').parser.end()).toThrow(Http1ProtocolError);
    expect(() => parse('HTTP/1.1 200 OK\r\nContent-Le').parser.end()).toThrow(Http1ProtocolError);
    expect(() => parse().parser.end()).toThrow(Http1ProtocolError);
  });

  it('throws on conflicting Content-Length headers', () => {
    expect(parseFailure('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd').message).toMatch(/conflicting Content-Length/);
  });

  it.each(['12a', '-1', '', '1.5', '0x10', '1 2', '1234567890123456'])('throws on the invalid Content-Length "%s"', (value) => {
    expect(parseFailure(`HTTP/1.1 200 OK\r\nContent-Length: ${value}\r\n\r\n`).message).toMatch(/invalid Content-Length/);
  });

  it.each(['zz', '', ';ext', 'g', '1234567890abcdef0'])('throws on the invalid chunk size "%s"', (size) => {
    expect(parseFailure(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${size}\r\n`).message).toMatch(/malformed chunk size/);
  });

  it('throws on chunk data longer than its declared size', () => {
    expect(parseFailure('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n').message).toMatch(/longer than its declared size/);
  });

  it('throws on chunk data longer than its declared size fed one byte at a time', () => {
    const bytes = Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n0\r\n\r\n');
    parseFailure(...Array.from(bytes, (byte) => Buffer.from([byte])));
  });

  it('throws on a chunk-size line that never ends', () => {
    expect(parseFailure(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;${'x'.repeat(5_000)}`).message).toMatch(/too long/);
  });

  it('throws on bytes after a complete response, once the response has ended', () => {
    const sink = new RecordingSink();
    const parser = new ResponseParser(sink);
    expect(() => parser.execute(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA'))).toThrow(/after the end of its response/);
    expect(sink.body.toString()).toBe('ok');
    expect(sink.endCount).toBe(1);
  });

  it('throws on bytes that arrive in a later chunk after a complete chunked response', () => {
    const { parser } = parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n');
    expect(parser.done).toBe(true);
    expect(() => parser.execute(Buffer.from('\r\n'))).toThrow(Http1ProtocolError);
  });

  it.each([
    'garbage\r\n\r\n',
    'HTTX/1.1 200 OK\r\n\r\n',
    'HTTP/2 200 OK\r\n\r\n',
    'HTTP/1.2 200 OK\r\n\r\n',
    'HTTP/1.1 20 OK\r\n\r\n',
    'HTTP/1.1 2000 OK\r\n\r\n',
    'HTTP/1.1 099 Low\r\n\r\n',
    'HTTP/1.1  200 OK\r\n\r\n',
    'HTTP/1.1 200OK\r\n\r\n',
    '\r\n\r\n',
  ])('throws on the status line of %j', (response) => {
    expect(parseFailure(response).message).toMatch(/malformed status line/);
  });

  it('accepts a status line without a reason phrase', () => {
    expect(parse('HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n').sink.statusCode).toBe(200);
    expect(parse('HTTP/1.1 599 \r\nContent-Length: 0\r\n\r\n').sink.statusCode).toBe(599);
  });

  it('throws on a head larger than 64 KiB that arrives without its end', () => {
    const filler = `X-Filler: ${'a'.repeat(1_000)}\r\n`;
    const head = `HTTP/1.1 200 OK\r\n${filler.repeat(Math.ceil(MAX_HEAD_BYTES / filler.length) + 1)}`;
    expect(MAX_HEAD_BYTES).toBe(64 * 1024);
    expect(parseFailure(head).message).toMatch(/larger than 65536 bytes/);
  });

  it('throws on a head larger than 64 KiB fed in small pieces, and not before it is', () => {
    const sink = new RecordingSink();
    const parser = new ResponseParser(sink);
    const piece = Buffer.from(`X-Filler: ${'a'.repeat(1_013)}\r\n`);
    expect(piece.length).toBe(1_025);
    parser.execute(Buffer.from('HTTP/1.1 200 OK\r\n'));
    let fed = 17;
    let thrown: unknown = null;
    while (thrown === null && fed < 2 * MAX_HEAD_BYTES) {
      try {
        parser.execute(piece);
        fed += piece.length;
      } catch (error) {
        thrown = error;
        fed += piece.length;
      }
    }
    expect(thrown).toBeInstanceOf(Http1ProtocolError);
    expect(fed).toBeGreaterThan(MAX_HEAD_BYTES);
    expect(fed).toBeLessThanOrEqual(MAX_HEAD_BYTES + piece.length);
    expect(sink.heads).toHaveLength(0);
  });

  it('accepts a head just under 64 KiB', () => {
    const filler = `X-Filler: ${'a'.repeat(1_000)}\r\n`;
    const head = `HTTP/1.1 200 OK\r\n${filler.repeat(60)}Content-Length: 0\r\n\r\n`;
    expect(head.length).toBeLessThan(MAX_HEAD_BYTES);
    const { sink } = parse(...Array.from({ length: Math.ceil(head.length / 1_000) }, (_, index) => head.slice(index * 1_000, index * 1_000 + 1_000)));
    expect(sink.statusCode).toBe(200);
    expect(sink.endCount).toBe(1);
  });

  it('throws on a complete head larger than 64 KiB that arrives in one chunk', () => {
    const filler = `X-Filler: ${'a'.repeat(1_000)}\r\n`;
    const head = `HTTP/1.1 200 OK\r\n${filler.repeat(100)}Content-Length: 0\r\n\r\n`;
    expect(head.length).toBeGreaterThan(MAX_HEAD_BYTES);
    parseFailure(head);
  });

  it('throws on an obs-fold header line', () => {
    expect(parseFailure('HTTP/1.1 200 OK\r\nX-Long: first part\r\n  second part\r\nContent-Length: 0\r\n\r\n').message).toMatch(/folding/);
    expect(parseFailure('HTTP/1.1 200 OK\r\nX-Long: first part\r\n\tsecond part\r\n\r\n').message).toMatch(/folding/);
  });

  it('throws on an obs-fold header line that contains a colon', () => {
    parseFailure('HTTP/1.1 200 OK\r\nLink: <https://example.com/a>,\r\n <https://example.com/b>\r\nContent-Length: 0\r\n\r\n');
  });

  it('throws on white space between a header name and its colon', () => {
    expect(parseFailure('HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello').message).toMatch(/white space before a header colon/);
  });

  it('keeps the header text without the line ending of its last line', () => {
    expect(parse('HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nContent-Length: 0\r\n\r\n').sink.head.text).toBe('A: 1\r\nB: 2\r\nContent-Length: 0');
  });

  it('throws on a header line without a colon', () => {
    expect(parseFailure('HTTP/1.1 200 OK\r\nNot a header\r\nContent-Length: 0\r\n\r\n').message).toMatch(/malformed header line/);
  });
});

describe('ResponseHead', () => {
  const text = [
    'Content-Type:  application/json ',
    'X-Multi: one',
    'x-multi: two',
    'X-MULTI:\tthree\t',
    'Set-Cookie: a=1; Path=/',
    'set-cookie: b=2, with a comma',
    'X-Empty:',
    'Date: Tue, 01 Jan 2030 00:00:00 GMT',
  ].join('\r\n');

  it('reads lower-case names, joins repeated headers, keeps set-cookie as a list and trims values', () => {
    const { sink } = parse(`HTTP/1.1 200 OK\r\n${text}\r\nContent-Length: 0\r\n\r\n`);
    expect(sink.head.headers).toEqual({
      'content-type': 'application/json',
      'x-multi': 'one, two, three',
      'set-cookie': ['a=1; Path=/', 'b=2, with a comma'],
      'x-empty': '',
      date: 'Tue, 01 Jan 2030 00:00:00 GMT',
      'content-length': '0',
    });
  });

  it('gives a single set-cookie as a list', () => {
    expect(new ResponseHead('Set-Cookie: only=1').headers).toEqual({ 'set-cookie': ['only=1'] });
  });

  it('reads the same headers from bare LF lines', () => {
    expect(new ResponseHead('A: 1\nB:2\na: 3').headers).toEqual({ a: '1, 3', b: '2' });
  });

  it('keeps the text as it arrived and reads it once', () => {
    const head = new ResponseHead('X-Case: Value');
    expect(head.text).toBe('X-Case: Value');
    expect(head.headers).toBe(head.headers);
    expect(head.headers).toEqual({ 'x-case': 'Value' });
  });

  it('is empty for a response without headers', () => {
    const { sink } = parse('HTTP/1.1 200 OK\r\n\r\n');
    expect(sink.head.headers).toEqual({});
  });
});
