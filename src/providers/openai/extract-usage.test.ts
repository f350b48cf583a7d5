import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { extractUsage } from './extract-usage.js';

const fixture = readFileSync(new URL('../../../test/fixtures/openai/chat-completion.json', import.meta.url));

describe('extractUsage', () => {
  it('reads the usage object of a recorded completion, nested details included', () => {
    expect(extractUsage(fixture)).toEqual(JSON.parse(fixture.toString()).usage);
  });

  it('finds the last usage key, past strings that contain braces and the word usage', () => {
    const body = Buffer.from(JSON.stringify({ choices: [{ message: { content: 'say "usage": {not this} \\" }' } }], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } }));
    expect(extractUsage(body)).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });

  it('says null when there is no usage, and undefined when the shortcut does not apply', () => {
    expect(extractUsage(Buffer.from('{"choices":[]}'))).toBeNull();
    expect(extractUsage(Buffer.from('{"choices":[],"usage":null}'))).toBeUndefined();
    expect(extractUsage(Buffer.from('{"usage": {"prompt_tokens": 1'))).toBeUndefined();
  });
});
