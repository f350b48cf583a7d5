import { writeFile } from 'node:fs/promises';

/**
 * Writes a tiny, valid GGUF v3 model (llama architecture, random F32 weights, SentencePiece
 * tokenizer with byte fallback, ChatML chat template) so the local chat engine can be tested
 * with the real llama.cpp without shipping a model. About 0.5 MB.
 *
 * Random weights give gibberish, but two things are shaped on purpose so tests are stable on
 * every CPU: the hidden state always carries a constant positive feature (dimension 0 of the
 * embeddings, which no layer reads or writes), and the output rows of control and byte tokens
 * weigh that feature heavily. So generation emits only printable ASCII pieces and never ends on
 * its own (`endOfTurn: 'never'`, the default), or ends at once (`endOfTurn: 'immediately'`).
 */
export interface TinyGgufOptions {
  seed?: number;
  endOfTurn?: 'never' | 'immediately';
}

export const tinyGgufShape = {
  embeddingLength: 64,
  blockCount: 2,
  headCount: 4,
  headCountKv: 4,
  feedForwardLength: 128,
  contextLength: 256,
} as const;

const chatMlTemplate =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

const tokenTypeNormal = 1;
const tokenTypeUnknown = 2;
const tokenTypeControl = 3;
const tokenTypeByte = 6;

// A handful of merged pieces so ordinary text tokenizes into fewer tokens than characters.
const wordPieces = [
  '▁the',
  '▁a',
  '▁of',
  '▁and',
  '▁to',
  '▁in',
  '▁is',
  '▁it',
  '▁you',
  '▁that',
  '▁hello',
  '▁world',
  '▁say',
  '▁user',
  '▁system',
  '▁assistant',
  'th',
  'he',
  'in',
  'er',
  'an',
  're',
  'on',
  'at',
  'en',
  'nd',
  'ti',
  'es',
  'or',
  'te',
  'ing',
  'ion',
  'ed',
  'ly',
  '▁t',
  '▁s',
  '▁w',
  '▁h',
  '▁o',
  '▁i',
];

interface Vocabulary {
  tokens: string[];
  scores: number[];
  types: number[];
  endOfTurnId: number;
  beginningId: number;
  unknownId: number;
  /** Tokens generation must avoid: control tokens and raw bytes. */
  suppressedIds: number[];
}

function buildVocabulary(): Vocabulary {
  const tokens: string[] = [];
  const scores: number[] = [];
  const types: number[] = [];
  const add = (text: string, type: number, score: number): number => {
    tokens.push(text);
    scores.push(score);
    types.push(type);
    return tokens.length - 1;
  };
  const unknownId = add('<unk>', tokenTypeUnknown, 0);
  const beginningId = add('<s>', tokenTypeControl, 0);
  add('</s>', tokenTypeControl, 0);
  add('<|im_start|>', tokenTypeControl, 0);
  const endOfTurnId = add('<|im_end|>', tokenTypeControl, 0);
  const suppressedIds = [unknownId, beginningId, 2, 3, endOfTurnId];
  for (let byte = 0; byte < 256; byte += 1) {
    const hex = byte.toString(16).toUpperCase().padStart(2, '0');
    suppressedIds.push(add(`<0x${hex}>`, tokenTypeByte, 0));
  }
  add('▁', tokenTypeNormal, -1);
  for (let code = 0x21; code <= 0x7e; code += 1) add(String.fromCharCode(code), tokenTypeNormal, -2);
  // SentencePiece merges the highest-scoring pair first; longer pieces win.
  for (const piece of wordPieces) add(piece, tokenTypeNormal, -3 + piece.length * 0.1);
  return { tokens, scores, types, endOfTurnId, beginningId, unknownId, suppressedIds };
}

/** mulberry32: small, fast and reproducible, which is all random weights need. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussianSource(random: () => number): (standardDeviation: number) => number {
  return (standardDeviation) => {
    const radius = Math.sqrt(-2 * Math.log(1 - random()));
    return radius * Math.cos(2 * Math.PI * random()) * standardDeviation;
  };
}

interface Tensor {
  name: string;
  /** ggml order: the first dimension is the contiguous one (a row's length). */
  dimensions: number[];
  values: Float32Array;
}

const constantFeature = 8;
const suppressionWeight = 10;

function buildTensors(vocabulary: Vocabulary, options: TinyGgufOptions): Tensor[] {
  const gaussian = gaussianSource(seededRandom(options.seed ?? 1234));
  const { embeddingLength, blockCount, feedForwardLength } = tinyGgufShape;
  const vocabularySize = vocabulary.tokens.length;
  const matrix = (name: string, rowLength: number, rows: number, standardDeviation: number): Tensor => {
    const values = new Float32Array(rowLength * rows);
    for (let index = 0; index < values.length; index += 1) values[index] = gaussian(standardDeviation);
    return { name, dimensions: [rowLength, rows], values };
  };
  const norm = (name: string, readsConstantFeature: boolean): Tensor => {
    const values = new Float32Array(embeddingLength).fill(1);
    // Layers must not see the constant feature, or it would leak into what they write back.
    if (!readsConstantFeature) values[0] = 0;
    return { name, dimensions: [embeddingLength], values };
  };
  const silenceRowZero = (tensor: Tensor): Tensor => {
    const rowLength = tensor.dimensions[0] ?? 0;
    tensor.values.fill(0, 0, rowLength);
    return tensor;
  };

  const embeddings = matrix('token_embd.weight', embeddingLength, vocabularySize, 1);
  for (let token = 0; token < vocabularySize; token += 1) embeddings.values[token * embeddingLength] = constantFeature;

  const tensors: Tensor[] = [embeddings];
  const inverseRoot = (length: number): number => 1 / Math.sqrt(length);
  for (let block = 0; block < blockCount; block += 1) {
    const prefix = `blk.${block}`;
    tensors.push(
      norm(`${prefix}.attn_norm.weight`, false),
      matrix(`${prefix}.attn_q.weight`, embeddingLength, embeddingLength, inverseRoot(embeddingLength)),
      matrix(`${prefix}.attn_k.weight`, embeddingLength, embeddingLength, inverseRoot(embeddingLength)),
      matrix(`${prefix}.attn_v.weight`, embeddingLength, embeddingLength, inverseRoot(embeddingLength)),
      silenceRowZero(matrix(`${prefix}.attn_output.weight`, embeddingLength, embeddingLength, inverseRoot(embeddingLength))),
      norm(`${prefix}.ffn_norm.weight`, false),
      matrix(`${prefix}.ffn_gate.weight`, embeddingLength, feedForwardLength, inverseRoot(embeddingLength)),
      matrix(`${prefix}.ffn_up.weight`, embeddingLength, feedForwardLength, inverseRoot(embeddingLength)),
      silenceRowZero(matrix(`${prefix}.ffn_down.weight`, feedForwardLength, embeddingLength, inverseRoot(feedForwardLength))),
    );
  }
  tensors.push(norm('output_norm.weight', true));

  const output = matrix('output.weight', embeddingLength, vocabularySize, 3 / Math.sqrt(embeddingLength - 1));
  for (let token = 0; token < vocabularySize; token += 1) output.values[token * embeddingLength] = 0;
  for (const token of vocabulary.suppressedIds) output.values[token * embeddingLength] = -suppressionWeight;
  if (options.endOfTurn === 'immediately') output.values[vocabulary.endOfTurnId * embeddingLength] = suppressionWeight;
  tensors.push(output);
  return tensors;
}

// GGUF metadata value types (ggml/docs/gguf.md).
const valueTypeUint32 = 4;
const valueTypeInt32 = 5;
const valueTypeFloat32 = 6;
const valueTypeBool = 7;
const valueTypeString = 8;
const valueTypeArray = 9;
const ggmlTypeF32 = 0;
const alignment = 32;

type MetadataValue =
  | { type: 'uint32'; value: number }
  | { type: 'float32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'strings'; value: string[] }
  | { type: 'float32s'; value: number[] }
  | { type: 'int32s'; value: number[] };

class ByteWriter {
  private readonly parts: Buffer[] = [];
  length = 0;

  push(buffer: Buffer): void {
    this.parts.push(buffer);
    this.length += buffer.length;
  }

  uint32(value: number): void {
    const buffer = Buffer.alloc(4);
    buffer.writeUInt32LE(value);
    this.push(buffer);
  }

  int32(value: number): void {
    const buffer = Buffer.alloc(4);
    buffer.writeInt32LE(value);
    this.push(buffer);
  }

  uint64(value: number): void {
    const buffer = Buffer.alloc(8);
    buffer.writeBigUInt64LE(BigInt(value));
    this.push(buffer);
  }

  float32(value: number): void {
    const buffer = Buffer.alloc(4);
    buffer.writeFloatLE(value);
    this.push(buffer);
  }

  string(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    this.uint64(bytes.length);
    this.push(bytes);
  }

  padTo(boundary: number): void {
    const remainder = this.length % boundary;
    if (remainder !== 0) this.push(Buffer.alloc(boundary - remainder));
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.parts);
  }
}

function writeMetadataValue(writer: ByteWriter, entry: MetadataValue): void {
  const writeArray = <Item>(elementType: number, items: Item[], writeItem: (item: Item) => void): void => {
    writer.uint32(valueTypeArray);
    writer.uint32(elementType);
    writer.uint64(items.length);
    for (const item of items) writeItem(item);
  };
  switch (entry.type) {
    case 'uint32':
      writer.uint32(valueTypeUint32);
      writer.uint32(entry.value);
      return;
    case 'float32':
      writer.uint32(valueTypeFloat32);
      writer.float32(entry.value);
      return;
    case 'bool':
      writer.uint32(valueTypeBool);
      writer.push(Buffer.from([entry.value ? 1 : 0]));
      return;
    case 'string':
      writer.uint32(valueTypeString);
      writer.string(entry.value);
      return;
    case 'strings':
      writeArray(valueTypeString, entry.value, (item) => writer.string(item));
      return;
    case 'float32s':
      writeArray(valueTypeFloat32, entry.value, (item) => writer.float32(item));
      return;
    case 'int32s':
      writeArray(valueTypeInt32, entry.value, (item) => writer.int32(item));
      return;
  }
}

function buildMetadata(vocabulary: Vocabulary): Array<[string, MetadataValue]> {
  const shape = tinyGgufShape;
  const uint32 = (value: number): MetadataValue => ({ type: 'uint32', value });
  return [
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: 'switchyard-tiny-random' }],
    ['general.alignment', uint32(alignment)],
    ['general.file_type', uint32(0)],
    ['llama.context_length', uint32(shape.contextLength)],
    ['llama.embedding_length', uint32(shape.embeddingLength)],
    ['llama.block_count', uint32(shape.blockCount)],
    ['llama.feed_forward_length', uint32(shape.feedForwardLength)],
    ['llama.attention.head_count', uint32(shape.headCount)],
    ['llama.attention.head_count_kv', uint32(shape.headCountKv)],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'float32', value: 1e-5 }],
    ['llama.rope.dimension_count', uint32(shape.embeddingLength / shape.headCount)],
    ['llama.rope.freq_base', { type: 'float32', value: 10000 }],
    ['llama.vocab_size', uint32(vocabulary.tokens.length)],
    ['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'strings', value: vocabulary.tokens }],
    ['tokenizer.ggml.scores', { type: 'float32s', value: vocabulary.scores }],
    ['tokenizer.ggml.token_type', { type: 'int32s', value: vocabulary.types }],
    ['tokenizer.ggml.bos_token_id', uint32(vocabulary.beginningId)],
    ['tokenizer.ggml.eos_token_id', uint32(vocabulary.endOfTurnId)],
    ['tokenizer.ggml.unknown_token_id', uint32(vocabulary.unknownId)],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: true }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
    ['tokenizer.chat_template', { type: 'string', value: chatMlTemplate }],
  ];
}

/** Builds the whole file in memory: header, metadata, tensor infos, aligned tensor data. */
export function buildTinyGguf(options: TinyGgufOptions = {}): Buffer {
  const vocabulary = buildVocabulary();
  const tensors = buildTensors(vocabulary, options);
  const metadata = buildMetadata(vocabulary);

  const writer = new ByteWriter();
  writer.push(Buffer.from('GGUF', 'ascii'));
  writer.uint32(3);
  writer.uint64(tensors.length);
  writer.uint64(metadata.length);
  for (const [key, value] of metadata) {
    writer.string(key);
    writeMetadataValue(writer, value);
  }
  let dataOffset = 0;
  for (const tensor of tensors) {
    writer.string(tensor.name);
    writer.uint32(tensor.dimensions.length);
    for (const dimension of tensor.dimensions) writer.uint64(dimension);
    writer.uint32(ggmlTypeF32);
    writer.uint64(dataOffset);
    dataOffset += Math.ceil(tensor.values.byteLength / alignment) * alignment;
  }
  writer.padTo(alignment);
  for (const tensor of tensors) {
    writer.push(Buffer.from(tensor.values.buffer, tensor.values.byteOffset, tensor.values.byteLength));
    writer.padTo(alignment);
  }
  return writer.toBuffer();
}

export async function makeTinyGguf(path: string, options?: TinyGgufOptions): Promise<void> {
  await writeFile(path, buildTinyGguf(options));
}
