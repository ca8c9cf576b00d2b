import type { FastifyInstance } from 'fastify';
import { batchEnvelope, checkBatchSize, objectType, type SandboxState } from '../context.js';
import { errorBody, httpError, SandboxHttpError, validationError } from '../errors.js';
import type { ObjectType, PropertyDef, PropertyType } from '../model.js';
import { FIELD_TYPES, makeProperty, propertyView } from '../properties.js';
import type { Owner } from '../store.js';

interface PropertyInput {
  name?: string;
  label?: string;
  type?: string;
  fieldType?: string;
  groupName?: string;
  description?: string;
  hasUniqueValue?: boolean;
  options?: PropertyDef['options'];
}

/** HubSpot allows at most 10 unique-value properties per object (changelog "unique properties"). */
const MAX_UNIQUE_PER_OBJECT = 10;

/** Properties API: list, read one, create (201; 409 when it exists), batch create, groups. */
export function registerProperties(app: FastifyInstance, state: SandboxState): void {
  const { store } = state;

  const createProperty = (type: ObjectType, input: PropertyInput) => {
    const defs = store.properties[type];
    const name = input.name ?? '';
    if (!/^[a-z][a-z0-9_]*$/.test(name)) throw validationError(`Invalid property name "${name}"`);
    if (defs.has(name)) {
      throw httpError(409, 'OBJECT_ALREADY_EXISTS', `Property named '${name}' already exists.`);
    }
    const pType = input.type as PropertyType;
    if (!input.label || !(pType in FIELD_TYPES))
      throw validationError(`label and a valid type are required for ${name}`);
    if (!input.fieldType || !FIELD_TYPES[pType].includes(input.fieldType)) {
      throw validationError(`fieldType ${String(input.fieldType)} is not valid for type ${pType}`);
    }
    const groupName = input.groupName ?? '';
    const groupKnown =
      store.groups[type].has(groupName) || [...defs.values()].some((d) => d.groupName === groupName);
    if (!groupKnown) throw validationError(`Property group ${groupName} does not exist`);
    if (
      input.hasUniqueValue &&
      [...defs.values()].filter((d) => d.hasUniqueValue).length >= MAX_UNIQUE_PER_OBJECT
    ) {
      throw validationError(`An object may have at most ${MAX_UNIQUE_PER_OBJECT} unique properties`);
    }
    const def = makeProperty(name, pType, input.fieldType, store.nowIso(), {
      label: input.label,
      groupName,
      description: input.description ?? '',
      hasUniqueValue: input.hasUniqueValue === true,
      options: input.options ?? [],
    });
    defs.set(name, def);
    return propertyView(def);
  };

  app.get<{ Params: { type: string } }>('/crm/properties/:version/:type', async (req) => ({
    results: [...store.properties[objectType(req.params.type)].values()].map(propertyView),
  }));

  app.get<{ Params: { type: string } }>('/crm/properties/:version/:type/groups', async (req) => ({
    results: [...store.groups[objectType(req.params.type)].values()],
  }));

  app.get<{ Params: { type: string; name: string } }>('/crm/properties/:version/:type/:name', async (req) => {
    const def = store.properties[objectType(req.params.type)].get(req.params.name);
    if (!def) {
      throw httpError(
        404,
        'OBJECT_NOT_FOUND',
        `Unable to find property ${req.params.name} on ${req.params.type}`,
      );
    }
    return propertyView(def);
  });

  app.post<{ Params: { type: string }; Body: PropertyInput }>(
    '/crm/properties/:version/:type',
    async (req, reply) => {
      const view = createProperty(objectType(req.params.type), req.body ?? {});
      reply.code(201);
      return view;
    },
  );

  app.post<{ Params: { type: string }; Body: { inputs?: PropertyInput[] } }>(
    '/crm/properties/:version/:type/batch/create',
    async (req, reply) => {
      const type = objectType(req.params.type);
      const inputs = checkBatchSize(req.body?.inputs) as PropertyInput[];
      const results: unknown[] = [];
      const errors: unknown[] = [];
      for (const input of inputs) {
        try {
          results.push(createProperty(type, input));
        } catch (err) {
          if (!(err instanceof SandboxHttpError)) throw err;
          errors.push({ ...err.body, context: { name: [input.name ?? ''] } });
        }
      }
      reply.code(errors.length > 0 ? 207 : 201);
      return batchEnvelope(state, results, errors);
    },
  );

  app.post<{ Params: { type: string }; Body: { name?: string; label?: string; displayOrder?: number } }>(
    '/crm/properties/:version/:type/groups',
    async (req, reply) => {
      const type = objectType(req.params.type);
      const name = req.body?.name ?? '';
      if (!/^[a-z][a-z0-9_]*$/.test(name) || !req.body?.label)
        throw validationError('name and label are required');
      if (store.groups[type].has(name)) {
        throw httpError(409, 'OBJECT_ALREADY_EXISTS', `A property group named '${name}' already exists.`);
      }
      const group = {
        name,
        label: req.body.label,
        displayOrder: req.body.displayOrder ?? -1,
        archived: false,
      };
      store.groups[type].set(name, group);
      reply.code(201);
      return group;
    },
  );

  const ownerView = (owner: Owner) => {
    const at = store.nowIso();
    return { ...owner, type: 'PERSON', createdAt: at, updatedAt: at, archived: false, teams: [] };
  };

  app.get<{ Params: { id: string } }>('/crm/owners/:version/:id', async (req, reply) => {
    const owner = store.owners.get(req.params.id);
    if (!owner) {
      reply.code(404);
      return errorBody('OBJECT_NOT_FOUND', `Owner ${req.params.id} not found`);
    }
    return ownerView(owner);
  });

  // The list of active owners, paged (limit at most 500); the SDK asks for `/crm/owners/:version/`.
  app.get<{ Querystring: { limit?: string; after?: string } }>('/crm/owners/:version', async (req) => {
    const all = [...store.owners.values()];
    const start = Number(req.query.after ?? 0);
    const limit = Math.min(Number(req.query.limit ?? 100), 500);
    if (!Number.isInteger(start) || start < 0 || !(limit > 0)) throw validationError('invalid paging');
    const next = start + limit < all.length ? String(start + limit) : undefined;
    return {
      results: all.slice(start, start + limit).map(ownerView),
      ...(next ? { paging: { next: { after: next, link: `?after=${next}` } } } : {}),
    };
  });
}
