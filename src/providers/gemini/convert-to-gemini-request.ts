import { GatewayError } from '../../errors/index.js';
import type { ChatRequestBody } from '../provider-adapter.js';
import type { GeminiGenerateContentRequest, GeminiGenerationConfig } from './gemini-api.js';
import { convertToGeminiContents } from './convert-to-gemini-contents.js';
import { convertToGeminiTools } from './convert-to-gemini-tools.js';

/**
 * An OpenAI chat completions body as a Gemini `generateContent` body. The model goes in the URL,
 * not the body. Fields Gemini has no counterpart for (user, logit_bias, parallel_tool_calls,
 * stream_options, metadata…) are dropped.
 */
export function convertToGeminiRequest(body: ChatRequestBody): GeminiGenerateContentRequest {
  const { systemInstruction, contents } = convertToGeminiContents(body.messages);
  const generationConfig = convertGenerationConfig(body);
  return {
    contents,
    ...(systemInstruction === undefined ? {} : { systemInstruction }),
    ...convertToGeminiTools(body['tools'], body['tool_choice']),
    ...(Object.keys(generationConfig).length > 0 ? { generationConfig } : {}),
  };
}

function convertGenerationConfig(body: ChatRequestBody): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  const temperature = numberField(body, 'temperature');
  if (temperature !== undefined) config.temperature = temperature;
  const topP = numberField(body, 'top_p');
  if (topP !== undefined) config.topP = topP;
  // max_completion_tokens replaced max_tokens in OpenAI's API; either means the same cap here.
  const maxTokens = numberField(body, 'max_completion_tokens') ?? numberField(body, 'max_tokens');
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  const stop = body['stop'];
  if (typeof stop === 'string') config.stopSequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) config.stopSequences = stop.filter((item): item is string => typeof item === 'string');
  const n = numberField(body, 'n');
  if (n !== undefined) config.candidateCount = n;
  const seed = numberField(body, 'seed');
  if (seed !== undefined) config.seed = seed;
  const presencePenalty = numberField(body, 'presence_penalty');
  if (presencePenalty !== undefined) config.presencePenalty = presencePenalty;
  const frequencyPenalty = numberField(body, 'frequency_penalty');
  if (frequencyPenalty !== undefined) config.frequencyPenalty = frequencyPenalty;
  Object.assign(config, responseFormat(body['response_format']));
  return config;
}

function responseFormat(format: unknown): GeminiGenerationConfig {
  if (format === undefined || format === null) return {};
  const type = (format as { type?: unknown }).type;
  if (type === 'text') return {};
  if (type === 'json_object') return { responseMimeType: 'application/json' };
  if (type === 'json_schema') {
    const schema = (format as { json_schema?: { schema?: unknown } }).json_schema?.schema;
    return { responseMimeType: 'application/json', ...(schema === undefined ? {} : { responseJsonSchema: schema }) };
  }
  throw new GatewayError('upstream_bad_request', 'response_format type is not supported by Gemini upstreams.', { param: 'response_format' });
}

function numberField(body: ChatRequestBody, key: string): number | undefined {
  const value = body[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
