/** "a, b ,c" → ['a', 'b', 'c']; blanks dropped. */
export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
