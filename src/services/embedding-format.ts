/** OpenAI's `base64` embedding format: the vector as little-endian float32, base64-encoded. */
export function vectorToBase64(vector: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  for (let index = 0; index < vector.length; index++) bytes.writeFloatLE(vector[index] as number, index * 4);
  return bytes.toString('base64');
}

export function vectorFromBase64(encoded: string): number[] {
  const bytes = Buffer.from(encoded, 'base64');
  const vector = new Array<number>(bytes.length >> 2);
  for (let index = 0; index < vector.length; index++) vector[index] = bytes.readFloatLE(index * 4);
  return vector;
}
