// Test support only: write speech into real audio files without any external encoder binary (MP3
// comes from the speech engine's own encodeMp3).
import { encodeWavPcm16 } from '../../../src/providers/local/audio/wav-file.js';

/** PCM WAV, 16-bit, any number of channels (cut to the shortest). */
export function encodeWave(channels: readonly Int16Array[], sampleRate: number): Uint8Array {
  const frameCount = Math.min(...channels.map((channel) => channel.length));
  const interleaved = new Int16Array(frameCount * channels.length);
  channels.forEach((channel, channelIndex) => {
    for (let frame = 0; frame < frameCount; frame += 1) interleaved[frame * channels.length + channelIndex] = channel[frame] ?? 0;
  });
  return encodeWavPcm16(interleaved, sampleRate, channels.length);
}

const MPEG1_BITRATES = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MPEG2_BITRATES = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const SAMPLE_RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

export interface Mp3Frames {
  frames: Uint8Array[];
  sampleRate: number;
  samplesPerFrame: number;
}

/** Cut a Layer III stream into its frames, for muxing into MP4 and Matroska. */
export function splitMp3Frames(stream: Uint8Array): Mp3Frames {
  const frames: Uint8Array[] = [];
  let sampleRate = 0;
  let samplesPerFrame = 0;
  let offset = 0;
  while (offset + 4 <= stream.length) {
    const second = stream[offset + 1] ?? 0;
    const third = stream[offset + 2] ?? 0;
    if (stream[offset] !== 0xff || (second & 0xe0) !== 0xe0) {
      offset += 1;
      continue;
    }
    const version = (second >> 3) & 3; // 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5
    const isMpeg1 = version === 3;
    const bitrate = (isMpeg1 ? MPEG1_BITRATES : MPEG2_BITRATES)[(third >> 4) & 15] ?? 0;
    sampleRate = SAMPLE_RATES[version]?.[(third >> 2) & 3] ?? 0;
    samplesPerFrame = isMpeg1 ? 1152 : 576;
    const length = Math.floor(((samplesPerFrame / 8) * bitrate * 1000) / sampleRate) + ((third >> 1) & 1);
    if (bitrate === 0 || sampleRate === 0 || length <= 4) throw new Error('unexpected MP3 frame header');
    frames.push(stream.subarray(offset, offset + length));
    offset += length;
  }
  return { frames, sampleRate, samplesPerFrame };
}

const FLAC_BLOCK_SIZE = 4096;

// Frame-header sample-rate codes. "Take it from STREAMINFO" (0) is legal but some parsers (codec-parser,
// used by the FLAC decoder) cannot resolve it, so every frame names its rate.
const FLAC_RATE_CODES: Record<number, number> = { 8000: 4, 16000: 5, 22050: 6, 24000: 7, 32000: 8, 44100: 9, 48000: 10 };

/** FLAC frames with VERBATIM subframes (valid, just uncompressed), mono 16-bit. */
export function encodeFlacFrames(samples: Int16Array, sampleRate: number): Uint8Array[] {
  const rateCode = FLAC_RATE_CODES[sampleRate];
  if (rateCode === undefined) throw new Error(`no FLAC rate code for ${sampleRate} Hz`);
  const frames: Uint8Array[] = [];
  for (let start = 0, frameNumber = 0; start < samples.length; start += FLAC_BLOCK_SIZE, frameNumber += 1) {
    const block = samples.subarray(start, start + FLAC_BLOCK_SIZE);
    // Sync + fixed blocking; block size "16-bit value at end"; rate code; mono; 16-bit.
    const header = [0xff, 0xf8, 0x70 | rateCode, 0x08, ...utf8CodedNumber(frameNumber), (block.length - 1) >> 8, (block.length - 1) & 0xff];
    header.push(crc8(header));
    const frame = [...header, 0x02]; // subframe header: VERBATIM, no wasted bits
    for (const sample of block) frame.push((sample >> 8) & 0xff, sample & 0xff);
    const crc = crc16(frame);
    frame.push(crc >> 8, crc & 0xff);
    frames.push(Uint8Array.from(frame));
  }
  return frames;
}

/** The 34-byte STREAMINFO block body for mono 16-bit audio. */
export function flacStreamInfo(sampleCount: number, sampleRate: number): Uint8Array {
  const info = Buffer.alloc(34);
  info.writeUInt16BE(FLAC_BLOCK_SIZE, 0);
  info.writeUInt16BE(FLAC_BLOCK_SIZE, 2);
  // bytes 4..9: min/max frame size unknown (0)
  // 20 bits rate, 3 bits channels-1 (0), 5 bits bits-per-sample-1 (15), 36 bits total samples
  info[10] = (sampleRate >> 12) & 0xff;
  info[11] = (sampleRate >> 4) & 0xff;
  info[12] = ((sampleRate & 0x0f) << 4) | (0 << 1) | (15 >> 4);
  info[13] = ((15 & 0x0f) << 4) | (Math.floor(sampleCount / 2 ** 32) & 0x0f);
  info.writeUInt32BE(sampleCount % 2 ** 32, 14);
  return info; // MD5 left zero: "not computed"
}

/** A native .flac file: "fLaC", STREAMINFO (last metadata block), frames. */
export function encodeFlac(samples: Int16Array, sampleRate: number): Uint8Array {
  const blockHeader = Uint8Array.from([0x80, 0, 0, 34]);
  return Buffer.concat([Buffer.from('fLaC', 'ascii'), blockHeader, flacStreamInfo(samples.length, sampleRate), ...encodeFlacFrames(samples, sampleRate)]);
}

function utf8CodedNumber(value: number): number[] {
  if (value < 0x80) return [value];
  if (value < 0x800) return [0xc0 | (value >> 6), 0x80 | (value & 0x3f)];
  return [0xe0 | (value >> 12), 0x80 | ((value >> 6) & 0x3f), 0x80 | (value & 0x3f)];
}

function crc8(bytes: readonly number[]): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x80 ? ((crc << 1) ^ 0x07) & 0xff : (crc << 1) & 0xff;
  }
  return crc;
}

function crc16(bytes: readonly number[]): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x8005) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}
