export { TeiAdapter, createTeiAdapter } from './tei-adapter.js';
