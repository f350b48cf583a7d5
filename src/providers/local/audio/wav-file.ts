import { LocalEngineError } from '../local-engine-error.js';

const HEADER_BYTES = 44;

/**
 * A canonical 44-byte RIFF/WAVE header followed by 16-bit little-endian PCM, `samples` interleaved
 * frame by frame when there is more than one channel. Nothing may stand between header and data:
 * pocketsphinx_continuous skips exactly 44 bytes and checks the rate in them.
 */
export function encodeWavPcm16(samples: Int16Array, sampleRate: number, channelCount = 1): Uint8Array {
  if (!Number.isInteger(channelCount) || channelCount < 1 || samples.length % channelCount !== 0) {
    throw new RangeError('samples must hold whole frames of a positive number of channels');
  }
  const blockAlign = 2 * channelCount;
  const dataBytes = samples.length * 2;
  const bytes = new Uint8Array(HEADER_BYTES + dataBytes);
  const view = new DataView(bytes.buffer);
  writeAscii(view, 0, 'RIFF');
  view.setUint32(4, 36 + dataBytes, true);
  writeAscii(view, 8, 'WAVE');
  writeAscii(view, 12, 'fmt ');
  view.setUint32(16, 16, true); // fmt chunk size for plain PCM
  view.setUint16(20, 1, true); // format tag: PCM
  view.setUint16(22, channelCount, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * blockAlign, true); // byte rate
  view.setUint16(32, blockAlign, true);
  view.setUint16(34, 16, true); // bits per sample
  writeAscii(view, 36, 'data');
  view.setUint32(40, dataBytes, true);
  for (let index = 0; index < samples.length; index += 1) {
    view.setInt16(HEADER_BYTES + index * 2, samples[index] ?? 0, true);
  }
  return bytes;
}

/**
 * Reads a mono 16-bit PCM WAVE file, walking the chunks rather than assuming 44 bytes so that files
 * with extra chunks (LIST, fact) still parse. Used for Flite's output and for checking our own, so
 * a file it cannot read is the engine's failure, not the caller's.
 */
export function decodeWavPcm16(bytes: Uint8Array): { sampleRate: number; samples: Int16Array } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 12 || readAscii(view, 0) !== 'RIFF' || readAscii(view, 8) !== 'WAVE') {
    throw new LocalEngineError('engine_failed', 'synthesised audio is not a WAVE file');
  }
  let sampleRate: number | undefined;
  let offset = 12;
  while (offset + 8 <= bytes.length) {
    const chunkId = readAscii(view, offset);
    const chunkSize = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (chunkId === 'fmt ') {
      const format = view.getUint16(body, true);
      const channels = view.getUint16(body + 2, true);
      const bitsPerSample = view.getUint16(body + 14, true);
      if (format !== 1 || channels !== 1 || bitsPerSample !== 16) {
        throw new LocalEngineError('engine_failed', 'synthesised audio is not 16-bit mono PCM');
      }
      sampleRate = view.getUint32(body + 4, true);
    } else if (chunkId === 'data') {
      if (sampleRate === undefined) break;
      const available = Math.min(chunkSize, bytes.length - body);
      const samples = new Int16Array(Math.floor(available / 2));
      for (let index = 0; index < samples.length; index += 1) {
        samples[index] = view.getInt16(body + index * 2, true);
      }
      return { sampleRate, samples };
    }
    offset = body + chunkSize + (chunkSize % 2); // chunks are padded to even length
  }
  throw new LocalEngineError('engine_failed', 'synthesised audio has no PCM data');
}

function writeAscii(view: DataView, offset: number, text: string): void {
  for (let index = 0; index < text.length; index += 1) view.setUint8(offset + index, text.charCodeAt(index));
}

function readAscii(view: DataView, offset: number): string {
  let text = '';
  for (let index = 0; index < 4; index += 1) text += String.fromCharCode(view.getUint8(offset + index));
  return text;
}
