/**
 * Band-limited sample-rate conversion for mono audio: a polyphase Kaiser-windowed sinc, shared by
 * speech (Flite's 16 kHz up to 24 kHz pcm, or to an MP3 rate) and transcription (uploads down to
 * pocketsphinx's 16 kHz). Linear interpolation would be simpler, but going up it leaves mirror images
 * of the speech above the old Nyquist (hiss on 16 → 24 kHz) and going down it folds everything above
 * the new Nyquist back into the speech band, which hurts recognisers that bring 44.1/48 kHz uploads
 * down to 16 kHz.
 */

/** Kernel half-width in zero crossings of the sinc; 16 keeps the transition band narrow. */
const ZERO_CROSSINGS = 16;
/** Kaiser β ≈ 8.6 gives about 85 dB of stop-band attenuation, below 16-bit quantisation noise. */
const KAISER_BETA = 8.6;
/** The pass band ends a little under the lower Nyquist so the filter skirt does not alias back in. */
const CUTOFF_FRACTION = 0.95;
/**
 * Common ratios have few phases (16 → 24 kHz: 3; 44.1 → 16 kHz: 160) and are computed exactly;
 * odd ones are snapped to this many phases, a timing error under 1/1024 of a sample.
 */
const MAX_PHASES = 1024;

/**
 * Resamples `samples` from `sourceRate` to `targetRate` (whole numbers of hertz). At equal rates, or
 * for no samples, `samples` itself comes back: a long upload that is already at the target rate is
 * not copied, so callers treat the result as read-only.
 */
export function resampleAudio(samples: Float32Array, sourceRate: number, targetRate: number): Float32Array {
  if (!Number.isInteger(sourceRate) || !Number.isInteger(targetRate) || sourceRate <= 0 || targetRate <= 0) {
    throw new RangeError('sample rates must be positive whole numbers');
  }
  if (sourceRate === targetRate || samples.length === 0) return samples;

  const divisor = greatestCommonDivisor(sourceRate, targetRate);
  const up = targetRate / divisor;
  const down = sourceRate / divisor;
  const phases = Math.min(up, MAX_PHASES);
  // Downsampling widens the kernel so its cut-off falls at the target's Nyquist instead.
  const cutoff = Math.min(1, targetRate / sourceRate) * CUTOFF_FRACTION;
  const halfWidth = Math.ceil(ZERO_CROSSINGS / cutoff);
  const tapCount = 2 * halfWidth;
  const weights = buildPhaseWeights(phases, cutoff, halfWidth);

  const outputLength = Math.round((samples.length * up) / down);
  const output = new Float32Array(outputLength);
  const inputLength = samples.length;
  for (let outputIndex = 0; outputIndex < outputLength; outputIndex += 1) {
    // Exact rational position: base input sample plus a fraction in units of 1/up.
    const numerator = outputIndex * down;
    let base = Math.floor(numerator / up);
    let phase = Math.round(((numerator - base * up) * phases) / up);
    if (phase === phases) {
      base += 1;
      phase = 0;
    }
    const first = base - halfWidth + 1;
    const row = phase * tapCount;
    let sum = 0;
    if (first >= 0 && first + tapCount <= inputLength) {
      for (let tap = 0; tap < tapCount; tap += 1) sum += (samples[first + tap] ?? 0) * (weights[row + tap] ?? 0);
    } else {
      // Near the ends the taps that fall outside the signal read silence.
      for (let tap = 0; tap < tapCount; tap += 1) {
        const inputIndex = first + tap;
        if (inputIndex >= 0 && inputIndex < inputLength) sum += (samples[inputIndex] ?? 0) * (weights[row + tap] ?? 0);
      }
    }
    output[outputIndex] = sum;
  }
  return output;
}

/** Row `phase` holds the kernel at distances (tap - halfWidth + 1 - phase/phases), at unit DC gain. */
function buildPhaseWeights(phases: number, cutoff: number, halfWidth: number): Float32Array {
  const tapCount = 2 * halfWidth;
  const weights = new Float32Array(phases * tapCount);
  const windowNormaliser = besselI0(KAISER_BETA);
  for (let phase = 0; phase < phases; phase += 1) {
    const fraction = phase / phases;
    let total = 0;
    const row = new Float64Array(tapCount);
    for (let tap = 0; tap < tapCount; tap += 1) {
      const distance = tap - halfWidth + 1 - fraction;
      const ratio = distance / halfWidth;
      const window = Math.abs(ratio) >= 1 ? 0 : besselI0(KAISER_BETA * Math.sqrt(1 - ratio * ratio)) / windowNormaliser;
      const value = sinc(distance * cutoff) * window;
      row[tap] = value;
      total += value;
    }
    // Per-phase normalisation keeps every phase at the same gain, so no ripple at the phase rate.
    for (let tap = 0; tap < tapCount; tap += 1) weights[phase * tapCount + tap] = (row[tap] ?? 0) / total;
  }
  return weights;
}

function sinc(x: number): number {
  if (x === 0) return 1;
  const angle = Math.PI * x;
  return Math.sin(angle) / angle;
}

/** Zeroth-order modified Bessel function of the first kind, by its power series. */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  const quarterSquare = (x * x) / 4;
  for (let k = 1; k < 100 && term > sum * 1e-15; k += 1) {
    term *= quarterSquare / (k * k);
    sum += term;
  }
  return sum;
}

function greatestCommonDivisor(first: number, second: number): number {
  let a = first;
  let b = second;
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Average all channels into one; recognisers want a single voice track, not a stereo image. */
export function downmixToMono(channels: readonly Float32Array[]): Float32Array {
  const first = channels[0];
  if (first === undefined) return new Float32Array(0);
  if (channels.length === 1) return first;
  const length = Math.min(...channels.map((channel) => channel.length));
  const mono = new Float32Array(length);
  for (const channel of channels) {
    for (let index = 0; index < length; index += 1) mono[index] = (mono[index] ?? 0) + (channel[index] ?? 0);
  }
  const scale = 1 / channels.length;
  for (let index = 0; index < length; index += 1) mono[index] = (mono[index] ?? 0) * scale;
  return mono;
}
