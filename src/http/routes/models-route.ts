import type { FastifyInstance } from 'fastify';
import { canUseModel, type Principal } from '../../access/index.js';
import { echo, GatewayError } from '../../errors/index.js';
import type { CatalogModel, ModelCatalog } from '../../routing/index.js';
import { sessionHeaders } from '../session-headers.js';

/** A model as `/v1/models` shows it; under an alias, named so, with the model it stands for in `alias_of`. */
function toModelObject(model: CatalogModel, name: string = model.id) {
  const shown = { id: name, object: 'model', created: model.created, owned_by: model.ownedBy, type: model.type };
  return name === model.id ? shown : { ...shown, alias_of: model.id };
}

/** `GET /v1/models` lists only what the caller's token may use; `GET /v1/models/{id}` is the SDK's `models.retrieve`. */
export function registerModelsRoutes(app: FastifyInstance, catalog: ModelCatalog): void {
  app.get('/v1/models', { config: { scope: 'models:read', endpoint: 'models.list' } }, (request, reply) => {
    const principal = request.principal as Principal;
    const data = [];
    for (const model of catalog.all()) {
      if (!canUseModel(principal, model.id)) continue;
      data.push(toModelObject(model));
      // A prefix (`claude-*`) is not a name a client could pick from a list.
      for (const alias of model.aliases ?? []) if (!alias.endsWith('*')) data.push(toModelObject(model, alias));
    }
    if (request.record !== null) reply.headers(sessionHeaders(request.record));
    reply.send({ object: 'list', data });
  });

  app.get<{ Params: { model: string } }>('/v1/models/*', { config: { scope: 'models:read', endpoint: 'models.retrieve' } }, (request, reply) => {
    const id = (request.params as Record<string, string>)['*'] ?? '';
    // `/v1/models/` names no model: it is a path the API does not have.
    if (id === '') throw new GatewayError('route_not_found', 'No route for GET /v1/models/.');
    const model = catalog.get(id);
    if (model === undefined || !canUseModel(request.principal as Principal, model.id)) {
      throw new GatewayError('model_not_found', `The model ${echo(id)} does not exist.`, { param: 'model' });
    }
    if (request.record !== null) {
      request.record.model = id;
      reply.headers(sessionHeaders(request.record));
    }
    reply.send(toModelObject(model, id));
  });
}
