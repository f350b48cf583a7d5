export { createOpenAIAdapter, OpenAIAdapter } from './openai-adapter.js';
