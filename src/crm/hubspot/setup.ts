import { CrmError, CrmRejectedError } from '../errors.js';
import type { FieldRequirement, SetupCheck, SetupReport } from '../types.js';
import type { Runner } from './runner.js';
import { probeScopes, scopesCheck, TOUCHED_TYPES } from './scopes.js';
import type { PropertyCreateInput, PropertyInfo } from './sdk.js';

/**
 * `doctor` for HubSpot: the credentials work, hold the read scopes crm-sync needs (scopes.ts), and
 * every property the mapping needs exists with a
 * fitting type (and is unique where it must be). With `fix`, missing properties are created in
 * the `crmsync` group; a property of the wrong type is reported, never changed.
 */
export const PROPERTY_GROUP = { name: 'crmsync', label: 'crm-sync' };

const TYPES: Record<FieldRequirement['type'], { accept: string[]; create: [string, string] }> = {
  string: { accept: ['string'], create: ['string', 'text'] },
  text: { accept: ['string'], create: ['string', 'textarea'] },
  number: { accept: ['number'], create: ['number', 'number'] },
  date: { accept: ['date', 'datetime'], create: ['date', 'date'] },
  datetime: { accept: ['datetime'], create: ['datetime', 'date'] },
  boolean: { accept: ['bool', 'enumeration'], create: ['bool', 'booleancheckbox'] },
};

/** Mapping files may name objects singular or plural, in any case. */
export function hubspotObjectType(object: string): string {
  const o = object.trim().toLowerCase();
  if (o === 'company' || o === 'companies') return 'companies';
  return o.endsWith('s') ? o : `${o}s`;
}

export async function verifyHubSpotSetup(
  run: Runner,
  required: FieldRequirement[],
  fix: boolean,
): Promise<SetupReport> {
  const byObject = new Map<string, FieldRequirement[]>();
  for (const r of required) {
    const type = hubspotObjectType(r.object);
    byObject.set(type, [...(byObject.get(type) ?? []), r]);
  }

  const types = {
    records: [...new Set([...TOUCHED_TYPES, ...byObject.keys()])],
    properties: [...new Set(['contacts', ...byObject.keys()])],
  };
  const probe = await probeScopes(run, types);
  if (probe.authError) {
    return { ok: false, checks: [{ name: 'credentials', ok: false, detail: probe.authError.message }] };
  }
  const checks: SetupCheck[] = [
    { name: 'credentials', ok: true, detail: 'HubSpot accepted the token' },
    scopesCheck(probe, types),
  ];
  for (const [objectType, reqs] of byObject) {
    const existing = probe.properties.get(objectType);
    if (!existing) {
      // The scopes check names the scope; the properties wait for it.
      if (reqs.length > 0)
        checks.push({ name: `${objectType} properties`, ok: false, detail: 'not checked: see scopes' });
      continue;
    }
    const byName = new Map(existing.map((p) => [p.name, p]));
    const missing: FieldRequirement[] = [];
    for (const req of reqs) {
      const have = byName.get(req.name);
      if (!have) missing.push(req);
      else checks.push(checkExisting(objectType, req, have));
    }
    if (missing.length === 0) continue;
    if (!fix) {
      for (const req of missing) {
        checks.push({
          name: `${objectType}.${req.name}`,
          ok: false,
          detail: 'missing',
          fix: `run "crm-sync doctor --fix" to create it (${describeCreate(req)})`,
        });
      }
      continue;
    }
    checks.push(...(await createMissing(run, objectType, missing)));
  }
  return { ok: checks.every((c) => c.ok), checks };
}

function checkExisting(objectType: string, req: FieldRequirement, have: PropertyInfo): SetupCheck {
  const name = `${objectType}.${req.name}`;
  const spec = TYPES[req.type];
  const fits =
    spec.accept.includes(have.type) && (have.type !== 'enumeration' || have.fieldType === 'booleancheckbox');
  if (!fits) {
    return {
      name,
      ok: false,
      detail: `has type ${have.type}/${have.fieldType}, needs ${req.type}`,
      fix: `change the mapping, or replace the property with one of type ${spec.create.join('/')}`,
    };
  }
  if (req.unique && !have.hasUniqueValue) {
    return {
      name,
      ok: false,
      detail: 'exists but does not require unique values',
      fix: 'HubSpot cannot make an existing property unique: delete it, then run "crm-sync doctor --fix"',
    };
  }
  return { name, ok: true, detail: `${have.type}/${have.fieldType}${have.hasUniqueValue ? ', unique' : ''}` };
}

async function createMissing(
  run: Runner,
  objectType: string,
  missing: FieldRequirement[],
): Promise<SetupCheck[]> {
  try {
    await run(`group ${objectType}`, (api) =>
      api.createGroup(objectType, PROPERTY_GROUP.name, PROPERTY_GROUP.label),
    );
  } catch (e) {
    // 409: the group exists already, which is what we want.
    if (!(e instanceof CrmRejectedError && e.status === 409)) throw e;
  }
  const inputs: PropertyCreateInput[] = missing.map((req) => {
    const [type, fieldType] = TYPES[req.type].create;
    return {
      name: req.name,
      label: req.label ?? req.name,
      type,
      fieldType,
      groupName: PROPERTY_GROUP.name,
      ...(req.unique ? { hasUniqueValue: true } : {}),
      ...(req.type === 'boolean'
        ? {
            options: [
              { label: 'Yes', value: 'true', displayOrder: 0, hidden: false },
              { label: 'No', value: 'false', displayOrder: 1, hidden: false },
            ],
          }
        : {}),
    };
  });
  let created: string[];
  let errors: { message: string; context?: Record<string, string[]> }[];
  try {
    ({ created, errors } = await run(`create properties ${objectType}`, (api) =>
      api.createProperties(objectType, inputs),
    ));
  } catch (e) {
    const message = e instanceof CrmError ? e.message : String(e);
    return missing.map((req) => ({
      name: `${objectType}.${req.name}`,
      ok: false,
      detail: `could not create: ${message}`,
    }));
  }
  return missing.map((req) => {
    const name = `${objectType}.${req.name}`;
    if (created.includes(req.name)) {
      return { name, ok: true, detail: 'created', fix: `created by --fix (${describeCreate(req)})` };
    }
    const error = errors.find((e) => e.context?.name?.includes(req.name)) ?? errors[0];
    return { name, ok: false, detail: `could not create: ${error?.message ?? 'no result'}` };
  });
}

function describeCreate(req: FieldRequirement): string {
  const [type, fieldType] = TYPES[req.type].create;
  return `${type}/${fieldType}${req.unique ? ', unique values' : ''}, group ${PROPERTY_GROUP.name}`;
}
