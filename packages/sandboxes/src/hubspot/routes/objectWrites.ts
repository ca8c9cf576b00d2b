import type { FastifyInstance } from 'fastify';
import { batchEnvelope, checkBatchSize, objectType, type SandboxState } from '../context.js';
import {
  errorBody,
  notFound,
  rejectUnknownProperties,
  validationError,
  type SandboxHttpError,
} from '../errors.js';
import { associationTarget, type ObjectType, type StoredObject } from '../model.js';
import { checkIdProperty } from './objectReads.js';

type Props = Record<string, unknown>;
interface AssociationInput {
  to?: { id?: string };
  types?: { associationCategory?: string; associationTypeId?: number }[];
}
interface CreateInput {
  properties?: Props;
  associations?: AssociationInput[];
}
interface UpsertInput {
  id?: string;
  idProperty?: string;
  properties?: Props;
}

/**
 * Create (201), batch create (201), batch upsert on a unique property (200/207), update (200): the
 * response codes of HubSpot's public CRM object specs (calls.json, notes.json, tasks.json in
 * HubSpot-public-api-spec-collection), which the SDK accepts and nothing else (wire notes 1.3).
 */
export function registerObjectWrites(app: FastifyInstance, state: SandboxState): void {
  const { store } = state;

  const createOne = (type: ObjectType, input: CreateInput): StoredObject => {
    const props = input.properties ?? {};
    store.assertValid(type, props, true);
    const links = (input.associations ?? []).map((a) => resolveAssociation(state, type, a));
    const obj = store.create(type, props);
    for (const l of links) store.associate(type, obj.id, l.to, l.toId, l.typeId, l.inverse);
    return obj;
  };

  app.post<{ Params: { type: string }; Body: CreateInput }>(
    '/crm/objects/:version/:type',
    async (req, reply) => {
      const type = objectType(req.params.type);
      const obj = createOne(type, req.body ?? {});
      reply.code(201);
      return store.view(type, obj, Object.keys(req.body?.properties ?? {}));
    },
  );

  // All or nothing: the inputs are checked before any is written.
  app.post<{ Params: { type: string }; Body: { inputs?: CreateInput[] } }>(
    '/crm/objects/:version/:type/batch/create',
    async (req, reply) => {
      const type = objectType(req.params.type);
      const inputs = checkBatchSize(req.body?.inputs) as CreateInput[];
      for (const input of inputs) {
        store.assertValid(type, input.properties ?? {}, true);
        for (const a of input.associations ?? []) resolveAssociation(state, type, a);
      }
      const results = inputs.map((input) =>
        store.view(type, createOne(type, input), Object.keys(input.properties ?? {})),
      );
      reply.code(201);
      return batchEnvelope(state, results, []);
    },
  );

  // A property that does not exist fails the whole batch (400); a bad value or a unique-value
  // conflict fails only its input (207). Results come back in no particular order, as HubSpot's do.
  app.post<{
    Params: { type: string };
    Querystring: { idProperty?: string };
    Body: { inputs?: UpsertInput[] };
  }>('/crm/objects/:version/:type/batch/upsert', async (req, reply) => {
    const type = objectType(req.params.type);
    const inputs = checkBatchSize(req.body?.inputs) as UpsertInput[];
    const ids = inputs.map((i) => String(i.id ?? ''));
    const dupes = ids.filter((id, i) => ids.indexOf(id) !== i);
    if (dupes.length > 0) {
      throw validationError(
        `Duplicate IDs found in batch input: [${[...new Set(dupes)].join(', ')}]. IDs must be unique`,
      );
    }
    const plans = inputs.map((input) => {
      const idProperty = input.idProperty ?? req.query.idProperty;
      if (!idProperty) throw validationError('idProperty is required for upsert');
      checkIdProperty(state, type, idProperty);
      const existing = store.findByProperty(type, idProperty, String(input.id ?? ''));
      const props = { ...(input.properties ?? {}) };
      if (!existing) props[idProperty] = String(input.id ?? '');
      return {
        input,
        idProperty,
        existing,
        props,
        problem: store.check(type, props, !existing, existing?.id),
      };
    });
    rejectUnknownProperties(plans.map((p) => p.problem));

    const results: unknown[] = [];
    const errors: unknown[] = [];
    for (const plan of plans) {
      const id = String(plan.input.id ?? '');
      if (plan.problem) {
        const err: SandboxHttpError | undefined =
          plan.problem.kind === 'conflict' ? plan.problem.error : undefined;
        const message =
          plan.problem.kind === 'invalid'
            ? `Property values were not valid: ${JSON.stringify(plan.problem.problems)}`
            : String(err?.body.message);
        errors.push({
          ...errorBody(plan.problem.kind === 'invalid' ? 'VALIDATION_ERROR' : 'CONFLICT', message, {
            context: { ids: [id] },
          }),
        });
        continue;
      }
      const obj = plan.existing
        ? store.update(type, plan.existing, plan.props)
        : store.create(type, plan.props);
      const view = store.view(type, obj, [...Object.keys(plan.props), plan.idProperty]);
      results.push({ ...view, new: !plan.existing });
    }
    reply.code(errors.length > 0 ? 207 : 200);
    return batchEnvelope(state, results.reverse(), errors);
  });

  app.patch<{
    Params: { type: string; id: string };
    Querystring: { idProperty?: string };
    Body: { properties?: Props };
  }>('/crm/objects/:version/:type/:id', async (req) => {
    const type = objectType(req.params.type);
    checkIdProperty(state, type, req.query.idProperty);
    const obj = store.get(type, req.params.id, req.query.idProperty);
    if (!obj) throw notFound(undefined, req.params.id);
    const props = req.body?.properties ?? {};
    store.assertValid(type, props, false, obj.id);
    store.update(type, obj, props);
    return store.view(type, obj, Object.keys(props));
  });
}

function resolveAssociation(state: SandboxState, from: ObjectType, a: AssociationInput) {
  const toId = String(a.to?.id ?? '');
  const typeId = a.types?.[0]?.associationTypeId;
  const target = typeId === undefined ? undefined : associationTarget(from, typeId);
  if (typeId === undefined || !target) {
    throw validationError(`Invalid association type ${String(typeId)} from ${from}`);
  }
  if (!state.store.get(target.to, toId)) {
    throw validationError(`No ${target.to} with id ${toId} exists to associate with.`);
  }
  return { to: target.to, toId, typeId, inverse: target.inverse };
}
