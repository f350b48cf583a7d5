import { createReadStream } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';

export interface MultipartFile {
  field: string;
  path: string;
  size: number;
  filename: string;
  contentType: string;
}

export interface MultipartBody {
  contentType: string;
  contentLength: number;
  stream: Readable;
}

/**
 * A multipart/form-data body whose file part is read from disk as it is sent: the fields, then the
 * file streamed, then the closing boundary. Its length is known in advance, so the upstream gets a
 * Content-Length rather than chunked encoding (some servers refuse chunked uploads).
 */
export function multipartBody(fields: ReadonlyArray<readonly [string, string]>, file: MultipartFile): MultipartBody {
  const boundary = `----switchyard${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`).join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="${quote(file.field)}"; filename="${quote(file.filename)}"\r\nContent-Type: ${file.contentType}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* parts(): AsyncGenerator<Buffer> {
    yield head;
    yield* createReadStream(file.path) as AsyncIterable<Buffer>;
    yield tail;
  }
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: head.length + file.size + tail.length,
    stream: Readable.from(parts(), { objectMode: false }),
  };
}

/** Quotes for a Content-Disposition parameter: no quote or line break may end the value early. */
function quote(value: string): string {
  return value.replace(/["\r\n\\]/g, '_');
}
