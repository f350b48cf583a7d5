import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import '@fastify/multipart';
import { validationError } from '../api/validation-issues.js';
import { GatewayError } from '../errors/index.js';

export interface SpooledFile {
  path: string;
  size: number;
  filename: string;
  /** The first bytes, to tell the format by. */
  head: Buffer;
  /** True when the upload went past the limit and was cut there. */
  tooLarge: boolean;
}

export interface Upload {
  fields: Array<[string, string]>;
  file: SpooledFile | null;
  /** Removes the spooled file; safe to call twice. */
  discard(): Promise<void>;
}

const HEAD_BYTES = 16;

/**
 * Reads a multipart form: fields into memory, the file part to a temporary file as it arrives. The
 * file is never held in memory whole, and busboy stops it at `maxFileBytes + 1`, so an oversized
 * upload is known the moment the limit is crossed, after writing no more than the limit to disk.
 * Clients send the file before `model` (the OpenAI SDKs do), so the file must be kept somewhere
 * before the request can be routed; disk is where it costs no memory.
 */
export async function readUpload(request: FastifyRequest, fileField: string, maxFileBytes: number): Promise<Upload> {
  if (!request.isMultipart()) {
    throw new GatewayError('unsupported_media_type', 'Send the request as multipart/form-data.');
  }
  // Uploads are read part by part off the wire; audio files are compressed already.
  const contentEncoding = request.headers['content-encoding'];
  if (contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== 'identity') {
    throw new GatewayError('unsupported_content_encoding', 'A multipart upload cannot be sent with a Content-Encoding; send it uncompressed.');
  }
  const fields: Array<[string, string]> = [];
  let file: SpooledFile | null = null;
  let directory: string | null = null;
  const discard = async () => {
    if (directory !== null) await rm(directory, { recursive: true, force: true });
    directory = null;
  };
  try {
    for await (const part of request.parts({ limits: { fileSize: maxFileBytes, files: 1, fields: 50, fieldSize: 1024 * 1024 } })) {
      if (part.type === 'field') {
        fields.push([part.fieldname, String(part.value)]);
        continue;
      }
      if (part.fieldname !== fileField || file !== null) {
        part.file.resume();
        continue;
      }
      directory = await mkdtemp(join(tmpdir(), 'switchyard-upload-'));
      const path = join(directory, 'upload');
      let size = 0;
      let head = Buffer.alloc(0);
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          if (head.length < HEAD_BYTES) head = Buffer.concat([head, chunk.subarray(0, HEAD_BYTES - head.length)]);
          size += chunk.length;
          done(null, chunk);
        },
      });
      await pipeline(part.file, counter, createWriteStream(path));
      file = { path, size, filename: basename(part.filename || 'audio'), head, tooLarge: part.file.truncated };
      // Past the limit: answer now; the rest of the upload is not read.
      if (file.tooLarge) break;
    }
  } catch (error) {
    await discard();
    if (error instanceof GatewayError) throw error;
    throw new GatewayError('invalid_body', `The multipart body could not be parsed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { fields, file, discard };
}

export function fileIssue(msg: string, type: string): GatewayError {
  return validationError([{ loc: ['body', 'file'], msg, type }]);
}
