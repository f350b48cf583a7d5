export { CohereAdapter, createCohereAdapter } from './cohere-adapter.js';
