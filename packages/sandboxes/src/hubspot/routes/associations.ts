import type { FastifyInstance } from 'fastify';
import { batchEnvelope, objectType, type SandboxState } from '../context.js';
import { errorBody, notFound, validationError } from '../errors.js';
import {
  defaultAssociationType,
  inverseAssociationType,
  OBJECT_TYPE_IDS,
  type ObjectType,
} from '../model.js';

interface TypeSpec {
  associationCategory?: string;
  associationTypeId?: number;
}

/** HubSpot refuses more than 1,000 inputs in a v4 batch read or create (changelog, February 2025). */
const MAX_ASSOCIATION_INPUTS = 1000;
/** Links per input in one batch read; more continue with the input's `after`, as on HubSpot. */
const BATCH_READ_PAGE = 500;

/**
 * Associations on the dated paths (`/crm/associations/{version}/...`, `/crm/objects/{version}/{type}/
 * {id}/associations/{toType}`), whose bodies are v4's (HubSpot API reference 2026-03/2026-09
 * "Associations"; the 2026-09 folder of HubSpot-public-api-spec-collection): list, batch read
 * (an input without links is a NO_ASSOCIATIONS_FOUND error in a 207), batch create, batch archive,
 * and the single PUTs (201 labelled, 200 default).
 */
export function registerAssociations(app: FastifyInstance, state: SandboxState): void {
  const { store } = state;

  const typesView = (typeIds: number[]) =>
    typeIds.map((typeId) => ({
      category: 'HUBSPOT_DEFINED',
      typeId,
      label: typeId === 1 || typeId === 5 ? 'Primary' : null,
    }));

  /** The batch routes' path types (checked first) and their inputs, refused past the input cap. */
  const batchRequest = <I>(params: { from: string; to: string }, body: { inputs?: I[] } | undefined) => {
    const from = objectType(params.from);
    const to = objectType(params.to);
    const inputs = body?.inputs ?? [];
    if (inputs.length > MAX_ASSOCIATION_INPUTS) throw validationError('Too many inputs');
    return { from, to, inputs };
  };

  app.get<{
    Params: { from: string; id: string; to: string };
    Querystring: { limit?: string; after?: string };
  }>('/crm/objects/:version/:from/:id/associations/:to', async (req) => {
    const from = objectType(req.params.from);
    const to = objectType(req.params.to);
    const all = store.associated(from, req.params.id, to);
    const start = Number(req.query.after ?? 0);
    const limit = Math.min(Number(req.query.limit ?? 500), 500);
    const page = all.slice(start, start + limit);
    const next = start + limit < all.length ? String(start + limit) : undefined;
    return {
      results: page.map((a) => ({ toObjectId: Number(a.toId), associationTypes: typesView(a.typeIds) })),
      ...(next ? { paging: { next: { after: next, link: `?after=${next}` } } } : {}),
    };
  });

  app.post<{ Params: { from: string; to: string }; Body: { inputs?: { id?: string; after?: string }[] } }>(
    '/crm/associations/:version/:from/:to/batch/read',
    async (req, reply) => {
      const { from, to, inputs } = batchRequest(req.params, req.body);
      const results: unknown[] = [];
      const errors: unknown[] = [];
      for (const input of inputs) {
        const id = String(input.id ?? '');
        const linked = store.associated(from, id, to);
        if (linked.length === 0) {
          errors.push(
            errorBody('OBJECT_NOT_FOUND', `No ${to} is associated with ${from} ${id}.`, {
              subCategory: 'crm.associations.NO_ASSOCIATIONS_FOUND',
              context: { fromObjectId: [id] },
            }),
          );
          continue;
        }
        const start = Number(input.after ?? 0);
        if (!Number.isInteger(start) || start < 0) throw validationError(`Invalid after value for ${id}`);
        const page = linked.slice(start, start + BATCH_READ_PAGE);
        const next = start + BATCH_READ_PAGE < linked.length ? String(start + BATCH_READ_PAGE) : undefined;
        results.push({
          from: { id },
          to: page.map((a) => ({ toObjectId: Number(a.toId), associationTypes: typesView(a.typeIds) })),
          ...(next ? { paging: { next: { after: next, link: `?after=${next}` } } } : {}),
        });
      }
      reply.code(errors.length > 0 ? 207 : 200);
      return batchEnvelope(state, results, errors);
    },
  );

  const link = (
    from: ObjectType,
    fromId: string,
    to: ObjectType,
    toId: string,
    spec: TypeSpec | undefined,
  ) => {
    const typeId = spec?.associationTypeId;
    const inverse = typeId === undefined ? undefined : inverseAssociationType(from, to, typeId);
    if (typeId === undefined || inverse === undefined) {
      return { error: `${String(typeId)} is not a valid association type from ${from} to ${to}.` };
    }
    if (!store.get(from, fromId)) return { error: `No ${from} with id ${fromId}.` };
    if (!store.get(to, toId)) return { error: `No ${to} with id ${toId}.` };
    store.associate(from, fromId, to, toId, typeId, inverse);
    return {
      result: {
        fromObjectTypeId: OBJECT_TYPE_IDS[from],
        fromObjectId: Number(fromId),
        toObjectTypeId: OBJECT_TYPE_IDS[to],
        toObjectId: Number(toId),
        labels: [],
      },
    };
  };

  // The TS field `_from` goes out as `from` on the wire (wire notes 1.3).
  app.post<{
    Params: { from: string; to: string };
    Body: { inputs?: { from?: { id?: string }; to?: { id?: string }; types?: TypeSpec[] }[] };
  }>('/crm/associations/:version/:from/:to/batch/create', async (req, reply) => {
    const { from, to, inputs } = batchRequest(req.params, req.body);
    const results: unknown[] = [];
    const errors: unknown[] = [];
    for (const input of inputs) {
      const fromId = String(input.from?.id ?? '');
      const toId = String(input.to?.id ?? '');
      const out = link(from, fromId, to, toId, input.types?.[0]);
      if (out.result) results.push(out.result);
      else {
        errors.push(
          errorBody('VALIDATION_ERROR', out.error ?? 'invalid input', {
            context: { fromObjectId: [fromId], toObjectId: [toId] },
          }),
        );
      }
    }
    reply.code(errors.length > 0 ? 207 : 201);
    return batchEnvelope(state, results, errors);
  });

  // Removes all associations between each `from` and its `to` ids; 204 with no body, also for pairs
  // not linked (API reference "Associations v4 > Batch > Delete":
  // developers.hubspot.com/docs/api-reference/crm-associations-v4/batch/post-crm-v4-associations-fromObjectType-toObjectType-batch-archive).
  // The SDK's batchApi.archive expects 204.
  app.post<{
    Params: { from: string; to: string };
    Body: { inputs?: { from?: { id?: string }; to?: { id?: string }[] }[] };
  }>('/crm/associations/:version/:from/:to/batch/archive', async (req, reply) => {
    const { from, to, inputs } = batchRequest(req.params, req.body);
    for (const input of inputs) {
      const fromId = String(input.from?.id ?? '');
      for (const target of input.to ?? []) store.dissociate(from, fromId, to, String(target.id ?? ''));
    }
    reply.code(204);
    return null;
  });

  // Answers 200; the SDK's createDefault accepts only 200.
  app.put<{ Params: { from: string; id: string; to: string; toId: string } }>(
    '/crm/objects/:version/:from/:id/associations/default/:to/:toId',
    async (req) => {
      const from = objectType(req.params.from);
      const to = objectType(req.params.to);
      const typeId = defaultAssociationType(from, to);
      const out = link(from, req.params.id, to, req.params.toId, { associationTypeId: typeId });
      if (!out.result) throw validationError(out.error ?? 'invalid association');
      return batchEnvelope(
        state,
        [
          {
            from: { id: req.params.id },
            to: { id: req.params.toId },
            associationSpec: { associationCategory: 'HUBSPOT_DEFINED', associationTypeId: typeId },
          },
        ],
        [],
      );
    },
  );

  // Answers 201 only: the SDK throws on a 200 here (wire notes 1.3).
  app.put<{ Params: { from: string; id: string; to: string; toId: string }; Body: TypeSpec[] }>(
    '/crm/objects/:version/:from/:id/associations/:to/:toId',
    async (req, reply) => {
      const from = objectType(req.params.from);
      const to = objectType(req.params.to);
      if (!store.get(from, req.params.id)) throw notFound(undefined, req.params.id);
      const out = link(from, req.params.id, to, req.params.toId, (req.body ?? [])[0]);
      if (!out.result) throw validationError(out.error ?? 'invalid association');
      reply.code(201);
      return out.result;
    },
  );
}
