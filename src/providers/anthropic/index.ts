export { AnthropicAdapter, createAnthropicAdapter } from './anthropic-adapter.js';
