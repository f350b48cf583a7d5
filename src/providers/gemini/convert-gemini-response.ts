import { randomBytes } from 'node:crypto';
import type { GeminiGenerateContentResponse } from './gemini-api.js';
import { mapGeminiFinishReason, type OpenAIFinishReason } from './map-gemini-finish-reason.js';
import { mapGeminiUsage, type OpenAIUsageObject } from './map-gemini-usage.js';
import { readGeminiCandidate, type CandidateOutput, type OpenAIToolCall } from './read-gemini-candidate.js';

export interface OpenAIChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: { role: 'assistant'; content: string | null; refusal: null; tool_calls?: OpenAIToolCall[] };
    logprobs: null;
    finish_reason: OpenAIFinishReason;
  }>;
  usage?: OpenAIUsageObject;
}

export interface ConvertedCompletion {
  completion: OpenAIChatCompletion;
  outputs: CandidateOutput[];
}

/**
 * A Gemini `GenerateContentResponse` as an OpenAI `chat.completion`. A prompt Gemini blocked has no
 * candidates; it becomes one empty choice finished by `content_filter`, as OpenAI reports a filter.
 */
export function convertGeminiResponse(response: GeminiGenerateContentResponse, requestedModel: string): ConvertedCompletion {
  const outputs: CandidateOutput[] = [];
  const choices: OpenAIChatCompletion['choices'] = (response.candidates ?? []).map((candidate, position) => {
    const output = readGeminiCandidate(candidate);
    outputs.push(output);
    const finishReason = mapGeminiFinishReason(candidate.finishReason, output.toolCalls.length > 0);
    const content = output.text === '' && (output.toolCalls.length > 0 || finishReason === 'content_filter') ? null : output.text;
    return {
      index: candidate.index ?? position,
      message: { role: 'assistant', content, refusal: null, ...(output.toolCalls.length > 0 ? { tool_calls: output.toolCalls } : {}) },
      logprobs: null,
      finish_reason: finishReason,
    };
  });
  if (choices.length === 0 && response.promptFeedback?.blockReason) {
    choices.push({ index: 0, message: { role: 'assistant', content: null, refusal: null }, logprobs: null, finish_reason: 'content_filter' });
  }
  const usage = mapGeminiUsage(response.usageMetadata);
  return {
    completion: {
      id: completionId(response.responseId),
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: response.modelVersion ?? requestedModel,
      choices,
      ...(usage === null ? {} : { usage }),
    },
    outputs,
  };
}

export function completionId(responseId: string | undefined): string {
  return `chatcmpl-${responseId ?? randomBytes(12).toString('hex')}`;
}
