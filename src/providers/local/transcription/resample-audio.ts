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

// Kernel half-width in zero crossings of the low-pass sinc: 10 gives a transition band narrow enough
// that speech below ~7.5 kHz passes untouched when going to 16 kHz, at ~60 taps for 48 kHz input.
const ZERO_CROSSINGS = 10;
// Fractional positions are snapped to this many precomputed kernel phases; 256 keeps the timing
// error below 1/256 of an input sample, far under what a recogniser can notice.
const PHASES = 256;
// Keep the cut-off a little under the target Nyquist so the Blackman skirt does not alias back.
const CUTOFF_MARGIN = 0.94;

/**
 * Band-limited resampling with a Blackman-windowed sinc (polyphase table). Downsampling low-passes at
 * the target's Nyquist so 44.1/48 kHz sources do not fold high frequencies into the speech band.
 */
export function resample(samples: Float32Array, sourceRate: number, targetRate: number): Float32Array {
  if (sourceRate === targetRate || samples.length === 0) return samples;
  const step = sourceRate / targetRate;
  const cutoff = Math.min(1, targetRate / sourceRate) * CUTOFF_MARGIN;
  const halfWidth = Math.ceil(ZERO_CROSSINGS / cutoff);
  const tapCount = 2 * halfWidth;
  const table = buildKernelTable(cutoff, halfWidth, tapCount);

  const outputLength = Math.max(1, Math.round(samples.length / step));
  const output = new Float32Array(outputLength);
  const lastIndex = samples.length - 1;
  for (let outputIndex = 0; outputIndex < outputLength; outputIndex += 1) {
    // Position in units of 1/PHASES input samples, so the phase carry into the next sample is exact.
    const scaledPosition = Math.round(outputIndex * step * PHASES);
    const base = Math.floor(scaledPosition / PHASES);
    const phase = scaledPosition - base * PHASES;
    const first = base - halfWidth + 1;
    const rowOffset = phase * tapCount;
    let sum = 0;
    for (let tap = 0; tap < tapCount; tap += 1) {
      const sourceIndex = first + tap;
      if (sourceIndex < 0 || sourceIndex > lastIndex) continue;
      sum += (samples[sourceIndex] ?? 0) * (table[rowOffset + tap] ?? 0);
    }
    output[outputIndex] = sum;
  }
  return output;
}

/** Row p holds the kernel sampled at distances (tap - halfWidth + 1 - p/PHASES), normalised to unit gain. */
function buildKernelTable(cutoff: number, halfWidth: number, tapCount: number): Float32Array {
  const table = new Float32Array(PHASES * tapCount);
  for (let phase = 0; phase < PHASES; phase += 1) {
    const fraction = phase / PHASES;
    let total = 0;
    for (let tap = 0; tap < tapCount; tap += 1) {
      const distance = tap - halfWidth + 1 - fraction;
      const value = cutoff * sinc(cutoff * distance) * blackman(distance / halfWidth);
      table[phase * tapCount + tap] = value;
      total += value;
    }
    // Unit DC gain per phase avoids a faint ripple at the phase rate.
    for (let tap = 0; tap < tapCount; tap += 1) {
      const index = phase * tapCount + tap;
      table[index] = (table[index] ?? 0) / total;
    }
  }
  return table;
}

function sinc(x: number): number {
  if (x === 0) return 1;
  const angle = Math.PI * x;
  return Math.sin(angle) / angle;
}

/** Blackman window over [-1, 1], zero outside. */
function blackman(x: number): number {
  if (x <= -1 || x >= 1) return 0;
  const angle = Math.PI * (x + 1);
  return 0.42 - 0.5 * Math.cos(angle) + 0.08 * Math.cos(2 * angle);
}

/** Float samples in [-1, 1] to signed 16-bit, clipping anything louder. */
export function toSigned16(samples: Float32Array): Int16Array {
  const output = new Int16Array(samples.length);
  for (let index = 0; index < samples.length; index += 1) {
    const value = Math.max(-1, Math.min(1, samples[index] ?? 0));
    output[index] = Math.round(value < 0 ? value * 32768 : value * 32767);
  }
  return output;
}
