// Test support only: minimal but standard Ogg, MP4 (M4A) and WebM muxers, so the decoders' container
// paths can be exercised with real speech although no AAC, Vorbis or Opus encoder exists offline.
import { encodeFlacFrames, flacStreamInfo, type Mp3Frames } from './test-audio-files.js';

// ---- Ogg ----------------------------------------------------------------------------------------

interface OggPacket {
  data: Uint8Array;
  /** Granule position of the page that ends with this packet (samples decoded so far). */
  granule: number;
}

/** One packet per page; first page flagged BOS, last EOS. */
function oggStream(packets: readonly OggPacket[], serial = 0x5157_4954): Uint8Array {
  const pages = packets.map((packet, sequence) => {
    const lacing: number[] = [];
    let remaining = packet.data.length;
    while (remaining >= 255) {
      lacing.push(255);
      remaining -= 255;
    }
    lacing.push(remaining);
    const header = Buffer.alloc(27 + lacing.length);
    header.write('OggS', 0, 'ascii');
    header[5] = (sequence === 0 ? 0x02 : 0) | (sequence === packets.length - 1 ? 0x04 : 0);
    header.writeBigInt64LE(BigInt(packet.granule), 6);
    header.writeUInt32LE(serial, 14);
    header.writeUInt32LE(sequence, 18);
    header[26] = lacing.length;
    lacing.forEach((value, index) => (header[27 + index] = value));
    const page = Buffer.concat([header, packet.data]);
    page.writeUInt32LE(oggCrc(page), 22);
    return page;
  });
  return Buffer.concat(pages);
}

function oggCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 24;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000_0000 ? (crc << 1) ^ 0x04c1_1db7 : crc << 1;
  }
  return crc >>> 0;
}

/** FLAC in Ogg (the Ogg FLAC mapping 1.0): mapping header + STREAMINFO, VORBIS_COMMENT, frames. */
export function encodeOggFlac(samples: Int16Array, sampleRate: number): Uint8Array {
  const mappingHeader = Buffer.concat([
    Uint8Array.from([0x7f, ...Buffer.from('FLAC'), 1, 0, 0, 1]),
    Buffer.from('fLaC'),
    Uint8Array.from([0x00, 0, 0, 34]),
    flacStreamInfo(samples.length, sampleRate),
  ]);
  const emptyComments = Uint8Array.from([0x84, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0]);
  const packets: OggPacket[] = [
    { data: mappingHeader, granule: 0 },
    { data: emptyComments, granule: 0 },
  ];
  let decoded = 0;
  for (const frame of encodeFlacFrames(samples, sampleRate)) {
    decoded = Math.min(samples.length, decoded + 4096);
    packets.push({ data: frame, granule: decoded });
  }
  return oggStream(packets);
}

// A CELT-only 20 ms Opus packet that decodes to digital silence (config 31, mono, one frame).
const OPUS_SILENT_PACKET = Uint8Array.from([0xf8, 0xff, 0xfe]);
const OPUS_PRE_SKIP = 312;

function opusHead(): Uint8Array {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'ascii');
  head[8] = 1; // version
  head[9] = 1; // channels
  head.writeUInt16LE(OPUS_PRE_SKIP, 10);
  head.writeUInt32LE(48_000, 12);
  return head; // output gain 0, channel mapping family 0
}

/** Ogg Opus holding `seconds` of silence: proves the libopus path decodes, though not speech. */
export function encodeSilentOggOpus(seconds: number): Uint8Array {
  const tags = Buffer.alloc(16);
  tags.write('OpusTags', 0, 'ascii'); // vendor length 0, comment count 0
  const packets: OggPacket[] = [
    { data: opusHead(), granule: 0 },
    { data: tags, granule: 0 },
  ];
  const packetCount = Math.round(seconds / 0.02);
  for (let index = 1; index <= packetCount; index += 1) packets.push({ data: OPUS_SILENT_PACKET, granule: OPUS_PRE_SKIP + index * 960 });
  return oggStream(packets);
}

// ---- MP4 / M4A ----------------------------------------------------------------------------------

function box(type: string, ...payload: Uint8Array[]): Buffer {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, 'ascii');
  return Buffer.concat([header, body]);
}

function fullBox(type: string, version: number, flags: number, ...payload: Uint8Array[]): Buffer {
  return box(type, Uint8Array.from([version, (flags >> 16) & 0xff, (flags >> 8) & 0xff, flags & 0xff]), ...payload);
}

function u32(...values: number[]): Buffer {
  const buffer = Buffer.alloc(values.length * 4);
  values.forEach((value, index) => buffer.writeUInt32BE(value >>> 0, index * 4));
  return buffer;
}

function u16(...values: number[]): Buffer {
  const buffer = Buffer.alloc(values.length * 2);
  values.forEach((value, index) => buffer.writeUInt16BE(value, index * 2));
  return buffer;
}

const IDENTITY_MATRIX = u32(0x0001_0000, 0, 0, 0, 0x0001_0000, 0, 0, 0, 0x4000_0000);

/** An .m4a (ISO BMFF, brand "M4A ") whose audio track is MP3 in an `mp4a` entry (esds OTI 0x6B). */
export function encodeM4aWithMp3(mp3: Mp3Frames): Uint8Array {
  const { frames, sampleRate, samplesPerFrame } = mp3;
  const duration = frames.length * samplesPerFrame;
  const ftyp = box('ftyp', Buffer.from('M4A '), u32(0), Buffer.from('M4A mp42isom'));
  const decoderConfig = Buffer.concat([Uint8Array.from([0x6b, 0x15, 0, 0, 0]), u32(128_000, 128_000)]);
  const esDescriptor = Buffer.concat([
    Uint8Array.from([0x03, 3 + 2 + decoderConfig.length + 3]),
    u16(1),
    Uint8Array.from([0]),
    Uint8Array.from([0x04, decoderConfig.length]),
    decoderConfig,
    Uint8Array.from([0x06, 1, 0x02]),
  ]);
  const sampleEntry = box('mp4a', Buffer.alloc(6), u16(1), Buffer.alloc(8), u16(1, 16, 0, 0), u32(sampleRate * 0x1_0000), fullBox('esds', 0, 0, esDescriptor));
  const buildMoov = (dataOffset: number): Buffer =>
    box(
      'moov',
      fullBox('mvhd', 0, 0, u32(0, 0, sampleRate, duration, 0x0001_0000), u16(0x0100, 0), Buffer.alloc(8), IDENTITY_MATRIX, Buffer.alloc(24), u32(2)),
      box(
        'trak',
        fullBox('tkhd', 0, 7, u32(0, 0, 1, 0, duration, 0, 0), u16(0, 0, 0x0100, 0), IDENTITY_MATRIX, u32(0, 0)),
        box(
          'mdia',
          fullBox('mdhd', 0, 0, u32(0, 0, sampleRate, duration), u16(0x55c4, 0)),
          fullBox('hdlr', 0, 0, u32(0), Buffer.from('soun'), Buffer.alloc(12), Buffer.from('SoundHandler\0')),
          box(
            'minf',
            fullBox('smhd', 0, 0, u16(0, 0)),
            box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1))),
            box(
              'stbl',
              fullBox('stsd', 0, 0, u32(1), sampleEntry),
              fullBox('stts', 0, 0, u32(1, frames.length, samplesPerFrame)),
              fullBox('stsc', 0, 0, u32(1, 1, frames.length, 1)),
              fullBox('stsz', 0, 0, u32(0, frames.length), u32(...frames.map((frame) => frame.length))),
              fullBox('stco', 0, 0, u32(1, dataOffset)),
            ),
          ),
        ),
      ),
    );
  // The chunk offset depends on the moov size, which does not depend on the offset's value.
  const moovSize = buildMoov(0).length;
  const moov = buildMoov(ftyp.length + moovSize + 8);
  return Buffer.concat([ftyp, moov, box('mdat', ...frames)]);
}

// ---- WebM ---------------------------------------------------------------------------------------

function ebml(id: number, ...payload: Uint8Array[]): Buffer {
  const body = Buffer.concat(payload);
  const idBytes: number[] = [];
  for (let value = id; value > 0; value = Math.floor(value / 256)) idBytes.unshift(value & 0xff);
  // Always an 8-byte size: valid EBML, and no need to pick the shortest width.
  const size = Buffer.alloc(8);
  size.writeBigUInt64BE(BigInt(body.length) | (1n << 56n));
  return Buffer.concat([Uint8Array.from(idBytes), size, body]);
}

function ebmlUnsigned(id: number, value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return ebml(id, bytes);
}

function ebmlFloat(id: number, value: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeDoubleBE(value);
  return ebml(id, bytes);
}

interface WebmTrack {
  codecId: string;
  codecPrivate?: Uint8Array;
  sampleRate: number;
  bitDepth?: number;
  /** Each frame with its start time in milliseconds. */
  frames: Array<{ data: Uint8Array; milliseconds: number }>;
}

/** A WebM file with one audio track, one cluster (the frames must span < 32 s), SimpleBlocks. */
function webm(track: WebmTrack): Uint8Array {
  const header = ebml(
    0x1a45dfa3,
    ebmlUnsigned(0x4286, 1),
    ebmlUnsigned(0x42f7, 1),
    ebmlUnsigned(0x42f2, 4),
    ebmlUnsigned(0x42f3, 8),
    ebml(0x4282, Buffer.from('webm')),
    ebmlUnsigned(0x4287, 4),
    ebmlUnsigned(0x4285, 2),
  );
  const info = ebml(0x1549a966, ebmlUnsigned(0x2ad7b1, 1_000_000), ebml(0x4d80, Buffer.from('switchyard-test')), ebml(0x5741, Buffer.from('switchyard-test')));
  const audio = ebml(0xe1, ebmlFloat(0xb5, track.sampleRate), ebmlUnsigned(0x9f, 1), ...(track.bitDepth ? [ebmlUnsigned(0x6264, track.bitDepth)] : []));
  const entry = ebml(
    0xae,
    ebmlUnsigned(0xd7, 1),
    ebmlUnsigned(0x73c5, 1),
    ebmlUnsigned(0x83, 2),
    ebml(0x86, Buffer.from(track.codecId)),
    ...(track.codecPrivate ? [ebml(0x63a2, track.codecPrivate)] : []),
    audio,
  );
  const blocks = track.frames.map(({ data, milliseconds }) => {
    const blockHeader = Buffer.alloc(4);
    blockHeader[0] = 0x81; // track number 1
    blockHeader.writeInt16BE(Math.round(milliseconds), 1);
    blockHeader[3] = 0x80; // keyframe
    return ebml(0xa3, blockHeader, data);
  });
  const cluster = ebml(0x1f43b675, ebmlUnsigned(0xe7, 0), ...blocks);
  return Buffer.concat([header, ebml(0x18538067, info, ebml(0x1654ae6b, entry), cluster)]);
}

/** WebM with an MP3 (A_MPEG/L3) audio track. */
export function encodeWebmWithMp3(mp3: Mp3Frames): Uint8Array {
  const frameMilliseconds = (mp3.samplesPerFrame / mp3.sampleRate) * 1000;
  return webm({
    codecId: 'A_MPEG/L3',
    sampleRate: mp3.sampleRate,
    frames: mp3.frames.map((data, index) => ({ data, milliseconds: index * frameMilliseconds })),
  });
}

/** WebM with an Opus track of `seconds` of silence: the libopus path, not speech. */
export function encodeSilentWebmOpus(seconds: number): Uint8Array {
  const packetCount = Math.round(seconds / 0.02);
  return webm({
    codecId: 'A_OPUS',
    codecPrivate: opusHead(),
    sampleRate: 48_000,
    frames: Array.from({ length: packetCount }, (_, index) => ({ data: OPUS_SILENT_PACKET, milliseconds: index * 20 })),
  });
}
