import { canUseModel, type Principal } from '../access/index.js';
import type { ModelType } from '../config/index.js';
import { echo, GatewayError } from '../errors/index.js';
import type { CatalogModel, ModelCatalog } from './model-catalog.js';

const ENDPOINT_OF_TYPE: Record<ModelType, string> = {
  chat: '/v1/chat/completions',
  embedding: '/v1/embeddings',
  rerank: '/v1/rerank',
  transcription: '/v1/audio/transcriptions',
  speech: '/v1/audio/speech',
};

/** The model a request names, checked in the order: exists (404), allowed (403), right type (400). */
export function resolveModel(catalog: ModelCatalog, principal: Principal, modelId: string, expected: ModelType): CatalogModel {
  const model = catalog.get(modelId);
  if (model === undefined) {
    throw new GatewayError('model_not_found', `The model ${echo(modelId)} does not exist.`, { param: 'model' });
  }
  if (!canUseModel(principal, modelId)) {
    throw new GatewayError('model_not_allowed', `This API key may not use the model ${echo(modelId)}.`, { param: 'model' });
  }
  if (model.type !== expected) {
    throw new GatewayError(
      'model_type_mismatch',
      `The model ${echo(modelId)} is ${article(model.type)} ${model.type} model; call ${ENDPOINT_OF_TYPE[model.type]} with it.`,
      { param: 'model' },
    );
  }
  return model;
}

/** "an embedding model", "a chat model". */
function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}
