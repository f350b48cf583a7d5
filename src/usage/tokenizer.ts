export type CountTokens = (text: string) => number;

let loading: Promise<CountTokens> | null = null;

/**
 * o200k_base from gpt-tokenizer. Its tables cost ~150 ms and tens of MB, so they load on first
 * use, not at start.
 */
export function loadTokenizer(): Promise<CountTokens> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then((module) => (text: string) => module.countTokens(text));
  return loading;
}
