import { canUseModel } from '../access/authorize.js';
import type { Principal } from '../access/index.js';
import type { ModelType } from '../config/index.js';
import { echo, GatewayError } from '../errors/index.js';
import type { CatalogModel, ModelCatalog } from '../routing/index.js';

const ENDPOINT_OF_TYPE: Record<ModelType, string> = {
  chat: '/v1/chat/completions',
  embedding: '/v1/embeddings',
  rerank: '/v1/rerank',
  transcription: '/v1/audio/transcriptions',
  speech: '/v1/audio/speech',
};

/**
 * The model a request names (by its id or an alias), checked in the order: exists (404), allowed
 * (403: the token's allow-list names models by id, and an alias is the same model), right type (400).
 */
export function resolveModel<Type extends ModelType>(catalog: ModelCatalog, principal: Principal, modelId: string, expected: Type): CatalogModel<Type> {
  const model = catalog.get(modelId);
  if (model === undefined) {
    throw new GatewayError('model_not_found', `The model ${echo(modelId)} does not exist. ${alternatives(catalog, principal, expected)}`, { param: 'model' });
  }
  if (!canUseModel(principal, model.id)) {
    throw new GatewayError('model_not_allowed', `This API key may not use the model ${echo(modelId)}.`, { param: 'model' });
  }
  if (model.type !== expected) {
    throw new GatewayError(
      'model_type_mismatch',
      `The model ${echo(modelId)} is ${article(model.type)} ${model.type} model; call ${ENDPOINT_OF_TYPE[model.type]} with it.`,
      { param: 'model' },
    );
  }
  // Its type was just checked: its routes carry that type's capability.
  return model as CatalogModel<Type>;
}

/** The ids of the models of `type` the caller may use that `serves` says yes to, in the catalog's order. */
export function usableModels<Type extends ModelType>(
  catalog: ModelCatalog,
  principal: Principal,
  type: Type,
  serves: (model: CatalogModel<Type>) => boolean,
): string[] {
  const usable: string[] = [];
  for (const model of catalog.all()) {
    // Its type was just checked: its routes carry that type's capability.
    if (model.type === type && canUseModel(principal, model.id) && serves(model as CatalogModel<Type>)) usable.push(model.id);
  }
  return usable;
}

/** "an embedding model", "a chat model". */
function article(word: string): string {
  return /^[aeiou]/.test(word) ? 'an' : 'a';
}

/** Shown past this many, a list is cut with a count of the rest. */
const MAX_LISTED_MODELS = 10;

/** What a caller that named no existing model could use instead, or how to get a model of this type at all. */
function alternatives(catalog: ModelCatalog, principal: Principal, type: ModelType): string {
  const usable: string[] = [];
  for (const model of catalog.all()) if (model.type === type && canUseModel(principal, model.id)) usable.push(model.id);
  if (usable.length > 0) {
    const listed = usable.slice(0, MAX_LISTED_MODELS).join(', ');
    const more = usable.length > MAX_LISTED_MODELS ? ` and ${usable.length - MAX_LISTED_MODELS} more (GET /v1/models)` : '';
    return `${capitalised(type)} models this API key may use: ${listed}${more}.`;
  }
  if (type === 'chat') {
    return 'This gateway serves no chat model to this API key: its operator can drop a GGUF file into ./models/ or add an upstream and a chat model to the config.';
  }
  return `This gateway serves no ${type} model to this API key.`;
}

function capitalised(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
