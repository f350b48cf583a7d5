import { randomBytes } from 'node:crypto';
import type { GeminiCandidate } from './gemini-api.js';

export interface OpenAIToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface CandidateOutput {
  /** Answer text; thought summaries are left out, as OpenAI's format has no place for them. */
  text: string;
  toolCalls: OpenAIToolCall[];
}

/** The text and function calls of one candidate (or one streamed piece of it). */
export function readGeminiCandidate(candidate: GeminiCandidate): CandidateOutput {
  let text = '';
  const toolCalls: OpenAIToolCall[] = [];
  for (const part of candidate.content?.parts ?? []) {
    if (part.functionCall !== undefined) {
      toolCalls.push({
        // Gemini gives calls no id; OpenAI clients need one to answer with a tool message.
        id: `call_${randomBytes(12).toString('hex')}`,
        type: 'function',
        function: { name: part.functionCall.name ?? '', arguments: JSON.stringify(part.functionCall.args ?? {}) },
      });
    } else if (typeof part.text === 'string' && part.thought !== true) {
      text += part.text;
    }
  }
  return { text, toolCalls };
}

/** Generated text billed as output, tool calls included, for estimating usage. */
export function generatedText(output: CandidateOutput): string {
  return output.text + output.toolCalls.map((call) => call.function.name + call.function.arguments).join('');
}
