export { createGeminiAdapter, GeminiAdapter } from './gemini-adapter.js';
