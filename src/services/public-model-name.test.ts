import { describe, expect, it } from 'vitest';
import { payloadWithPublicModel, topLevelStringValue, withNestedPublicModel, withPublicModel } from './public-model-name.js';

describe('withPublicModel', () => {
  it('sets the top-level model, leaving every other byte as it was', () => {
    const chunk = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt4o-prod","choices":[{"delta":{"content":"hi"}}]}';
    expect(withPublicModel(chunk, 'gpt-4o')).toBe(chunk.replace('"gpt4o-prod"', '"gpt-4o"'));
  });

  it('never takes a key inside a string or a nested object for it', () => {
    const chunk = '{"choices":[{"delta":{"content":"\\"model\\":\\"x\\"","model":"nested"}}],"meta":{"model":"deep"} , "model" : "up\\"stream"}';
    const replaced = withPublicModel(chunk, 'public');
    expect(JSON.parse(replaced)).toEqual({ ...(JSON.parse(chunk) as object), model: 'public' });
  });

  it('leaves the text alone without a string model, or with the public one already', () => {
    for (const text of ['{"id":"x"}', '{"model":null}', '{"model":"public"}', '[{"model":"a"}]', 'not json']) {
      expect(withPublicModel(text, 'public')).toBe(text);
    }
  });

  it('writes the public id as JSON', () => {
    expect(JSON.parse(withPublicModel('{"model":"a"}', 'team/"quoted"'))).toEqual({ model: 'team/"quoted"' });
    expect(topLevelStringValue('{"a":"\\\\","model":"b"}', 'model')).toEqual({ start: 18, end: 21 });
  });
});

describe('withNestedPublicModel', () => {
  it("sets the model of a stream event's response, not a model elsewhere", () => {
    const event = '{"type":"response.created","item":{"model":"x"},"response":{"id":"r","metadata":{"model":"m"},"model":"snapshot-1","output":[]}}';
    expect(JSON.parse(withNestedPublicModel(event, 'response', 'public'))).toEqual({
      type: 'response.created',
      item: { model: 'x' },
      response: { id: 'r', metadata: { model: 'm' }, model: 'public', output: [] },
    });
    expect(withNestedPublicModel('{"type":"response.output_text.delta","delta":"\\"response\\":{"}', 'response', 'public')).toBe(
      '{"type":"response.output_text.delta","delta":"\\"response\\":{"}',
    );
  });
});

describe('payloadWithPublicModel', () => {
  it("replaces the model's bytes alone, whatever UTF-8 surrounds them, and hands on the same bytes when the id is already the public one", () => {
    const body = Buffer.from('{"id":"é→😀","model":"snap-1","choices":[{"message":{"content":"héllo 😀"}}]}');
    expect(Buffer.from(payloadWithPublicModel(body, 'modèle-public')).toString('utf8')).toBe(
      '{"id":"é→😀","model":"modèle-public","choices":[{"message":{"content":"héllo 😀"}}]}',
    );
    const already = Buffer.from('{"id":"é","model":"modèle-public"}');
    expect(payloadWithPublicModel(already, 'modèle-public')).toBe(already);
  });
});
