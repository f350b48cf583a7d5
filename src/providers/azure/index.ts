export { createAzureAdapter } from './azure-adapter.js';
export { DEFAULT_AZURE_API_VERSION } from './azure-endpoints.js';
