import type { FastifyInstance } from 'fastify';
import { batchEnvelope, checkBatchSize, objectType, queryList, type SandboxState } from '../context.js';
import { errorBody, notFound, validationError } from '../errors.js';
import type { ObjectType } from '../model.js';
import { matchesSearch, pageOf, sortObjects, validateSearch, type SearchRequest } from '../search.js';

/**
 * Search, read by id (optionally by a unique `idProperty`) and batch read, whose missing ids come
 * back as errors in a 207 (HubSpot CRM objects guide, "Retrieve records"; public spec batch/read
 * answers 200/207).
 */
export function registerObjectReads(app: FastifyInstance, state: SandboxState): void {
  const { store } = state;

  app.post<{ Params: { type: string }; Body: SearchRequest }>(
    '/crm/objects/:version/:type/search',
    async (req) => {
      const type = objectType(req.params.type);
      const body = req.body ?? {};
      validateSearch(body);
      const defs = store.properties[type];
      const matching = [...store.objects[type].values()].filter(
        (o) => !o.archived && matchesSearch(o, body, defs),
      );
      const sorted = sortObjects(matching, body.sorts, defs);
      const { page, next, total } = pageOf(sorted, body.limit, body.after);
      return {
        total,
        results: page.map((o) => store.view(type, o, body.properties)),
        ...(next ? { paging: { next: { after: next, link: `?after=${next}` } } } : {}),
      };
    },
  );

  app.get<{ Params: { type: string; id: string }; Querystring: Record<string, unknown> }>(
    '/crm/objects/:version/:type/:id',
    async (req) => {
      const type = objectType(req.params.type);
      const idProperty = req.query.idProperty === undefined ? undefined : String(req.query.idProperty);
      checkIdProperty(state, type, idProperty);
      const obj = store.get(type, req.params.id, idProperty);
      if (!obj) throw notFound(undefined, req.params.id);
      const view = store.view(type, obj, queryList(req.query.properties));
      const assocTypes = queryList(req.query.associations);
      if (assocTypes.length === 0) return view;
      const associations: Record<string, unknown> = {};
      for (const raw of assocTypes) {
        const to = objectType(raw);
        const results = store
          .associated(type, obj.id, to)
          .flatMap(({ toId, typeIds }) => typeIds.map((t) => ({ id: toId, type: v3TypeName(type, to, t) })));
        if (results.length > 0) associations[to] = { results };
      }
      return { ...view, associations };
    },
  );

  app.post<{
    Params: { type: string };
    Body: { inputs?: { id?: string }[]; properties?: string[]; idProperty?: string };
  }>('/crm/objects/:version/:type/batch/read', async (req, reply) => {
    const type = objectType(req.params.type);
    const inputs = checkBatchSize(req.body?.inputs) as { id?: string }[];
    checkIdProperty(state, type, req.body?.idProperty);
    const results: unknown[] = [];
    const missing: string[] = [];
    for (const input of inputs) {
      const obj = store.get(type, String(input.id ?? ''), req.body?.idProperty);
      if (obj) results.push(store.view(type, obj, req.body?.properties));
      else missing.push(String(input.id ?? ''));
    }
    const errors =
      missing.length === 0
        ? []
        : [
            {
              ...errorBody(
                'OBJECT_NOT_FOUND',
                `Could not get some ${type.toUpperCase()} objects, they may be deleted or not exist. Check that ids are valid.`,
                { context: { ids: missing } },
              ),
            },
          ];
    reply.code(errors.length > 0 ? 207 : 200);
    return batchEnvelope(state, results, errors);
  });
}

/** Reads by a property other than the id need a unique one (or a contact's email). */
export function checkIdProperty(state: SandboxState, type: ObjectType, idProperty: string | undefined): void {
  if (idProperty === undefined || idProperty === 'hs_object_id') return;
  if (type === 'contacts' && idProperty === 'email') return;
  const def = state.store.properties[type].get(idProperty);
  if (!def) throw validationError(`Property "${idProperty}" does not exist`);
  if (!def.hasUniqueValue) throw validationError(`${idProperty} is not a unique identifier property`);
}

/** The v3 `associations` field names each link like `contact_to_company(_unlabeled)`. */
function v3TypeName(from: ObjectType, to: ObjectType, typeId: number): string {
  const base = `${from.replace(/ies$/, 'y').replace(/s$/, '')}_to_${to.replace(/ies$/, 'y').replace(/s$/, '')}`;
  return typeId === 279 || typeId === 341 ? `${base}_unlabeled` : base;
}
