export { JinaAdapter, createJinaAdapter } from './jina-adapter.js';
