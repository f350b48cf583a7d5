import decode from 'audio-decode';
import { LocalEngineError } from '../local-engine-error.js';

export interface DecodedAudio {
  channels: Float32Array[];
  sampleRate: number;
}

export const UNDECODABLE_AUDIO_MESSAGE = 'the audio file could not be decoded';

const MIN_SAMPLE_RATE = 1_000;
const MAX_SAMPLE_RATE = 768_000;

/**
 * Decode any container/codec audio-decode knows (WAV, MP3, FLAC, Ogg Vorbis/Opus/FLAC, M4A/MP4 AAC or
 * ALAC, WebM/Matroska Opus or Vorbis, AIFF, CAF, …) to float samples, sniffing the format from the
 * bytes rather than trusting a file name. Every codec is JavaScript or WebAssembly, so nothing outside
 * node_modules is needed.
 */
export async function decodeAudio(bytes: Uint8Array): Promise<DecodedAudio> {
  let decoded: { channelData: Float32Array[]; sampleRate: number };
  try {
    decoded = await decode(bytes);
  } catch {
    // The decoders' messages name internals ("Unknown audio format", "libopus -4 …"); callers only
    // need to know the upload is not audio we can read.
    throw new LocalEngineError('invalid_request', UNDECODABLE_AUDIO_MESSAGE);
  }
  const channels = decoded.channelData.filter((channel) => channel.length > 0);
  // A recognised header followed by no decodable frame is as useless as garbage; so is a header
  // claiming a rate no recording has, which would also make the resampler's filter table enormous.
  if (channels.length === 0 || !(decoded.sampleRate >= MIN_SAMPLE_RATE && decoded.sampleRate <= MAX_SAMPLE_RATE)) {
    throw new LocalEngineError('invalid_request', UNDECODABLE_AUDIO_MESSAGE);
  }
  return { channels, sampleRate: decoded.sampleRate };
}
