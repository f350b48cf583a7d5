import type { ChatRequestBody } from '../provider-adapter.js';
import type { LocalChatRequest } from './chat/llama-chat-engine.js';
import { LocalEngineError } from './local-engine-error.js';

/** OpenAI request fields a local model cannot honour: refused rather than silently ignored. */
const UNSUPPORTED_FIELDS = ['tools', 'functions', 'tool_choice', 'function_call', 'logprobs', 'top_logprobs', 'audio', 'modalities', 'prediction'] as const;

/** An OpenAI chat request as the local llama.cpp engine takes it. */
export function convertLocalChatRequest(body: ChatRequestBody): LocalChatRequest {
  for (const field of UNSUPPORTED_FIELDS) {
    const value = body[field];
    if (value !== undefined && value !== null && value !== false) {
      throw new LocalEngineError('invalid_request', `Local chat models do not support '${field}'.`);
    }
  }
  const choices = body['n'];
  if (typeof choices === 'number' && choices !== 1) throw new LocalEngineError('invalid_request', 'Local chat models produce one choice (n must be 1).');
  const maxTokens = numberField(body, 'max_completion_tokens') ?? numberField(body, 'max_tokens');
  const temperature = numberField(body, 'temperature');
  const topP = numberField(body, 'top_p');
  const seed = numberField(body, 'seed');
  const stop = body['stop'];
  const stopList = typeof stop === 'string' ? [stop] : Array.isArray(stop) ? stop.filter((item): item is string => typeof item === 'string') : undefined;
  return {
    messages: body.messages.map((message) => {
      const { role, content } = (message ?? {}) as { role?: unknown; content?: unknown };
      return { role: typeof role === 'string' ? role : 'user', content };
    }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(topP === undefined ? {} : { topP }),
    ...(seed === undefined ? {} : { seed }),
    ...(stopList === undefined || stopList.length === 0 ? {} : { stop: stopList }),
  };
}

function numberField(body: ChatRequestBody, name: string): number | undefined {
  const value = body[name];
  return typeof value === 'number' ? value : undefined;
}
