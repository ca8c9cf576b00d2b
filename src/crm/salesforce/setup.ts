import { CrmAuthError, CrmError, CrmSetupError } from '../errors.js';
import type { FieldRequirement, SetupCheck, SetupReport } from '../types.js';
import { judgeApiVersion } from './apiVersions.js';
import type { SalesforceContext } from './context.js';
import type { FieldInfo, ObjectInfo } from './describe.js';

/** Salesforce field types that hold each kind of mapped value. */
const FITTING_TYPES: Record<FieldRequirement['type'], string[]> = {
  string: ['string', 'textarea', 'email', 'url', 'phone', 'picklist', 'combobox', 'encryptedstring'],
  text: ['textarea', 'string'],
  number: ['double', 'int', 'long', 'currency', 'percent'],
  date: ['date'],
  datetime: ['datetime'],
  boolean: ['boolean'],
};

/** How an admin creates the field in Setup > Object Manager > Fields & Relationships. */
function fieldRecipe(req: FieldRequirement): string {
  const kind: Record<FieldRequirement['type'], string> = {
    string: 'Text(255)',
    text: 'Text Area (Long)(32768)',
    number: 'Number(16, 2)',
    date: 'Date',
    datetime: 'Date/Time',
    boolean: 'Checkbox',
  };
  const unique = req.unique ? ', External ID, Unique (case-insensitive)' : '';
  const label = req.label ?? req.name.replace(/__c$/, '').replace(/_/g, ' ');
  return (
    `In Setup > Object Manager > ${req.object} > Fields & Relationships, create "${label}" ` +
    `(API name ${req.name}): ${kind[req.type]}${unique}, visible and editable for the integration user`
  );
}

function checkField(req: FieldRequirement, field: FieldInfo | undefined): SetupCheck {
  const name = `${req.object}.${req.name}`;
  if (!field) return { name, ok: false, detail: 'missing', fix: fieldRecipe(req) };
  if (!FITTING_TYPES[req.type].includes(field.type)) {
    return {
      name,
      ok: false,
      detail: `is ${field.type}, needs ${req.type}`,
      fix: `Change ${name} to ${fieldRecipe(req).split(': ')[1]}, or map another field`,
    };
  }
  // Upserts address records by an External ID field; Salesforce refuses one on any other field,
  // and without Unique two records could carry the same call id.
  if (req.unique && !field.externalId) {
    return {
      name,
      ok: false,
      detail: `${field.type}, but not marked External ID (upserts on it are refused)`,
      fix: `Edit ${name}: tick External ID${field.unique ? '' : ' and Unique'}`,
    };
  }
  if (req.unique && !field.unique) {
    return {
      name,
      ok: false,
      detail: 'External ID, but not Unique',
      fix: `Edit ${name}: tick Unique`,
    };
  }
  if (!field.createable || !field.updateable) {
    return {
      name,
      ok: false,
      detail: 'not writable by the integration user',
      fix: `Give the integration user edit access to ${name} (field-level security)`,
    };
  }
  return { name, ok: true, detail: `${field.type}${field.length ? `(${field.length})` : ''}` };
}

/**
 * Credentials and the API version (`/services/data`, the versions the org offers: every other
 * request is made under the configured one), then the org's API usage (one `limits` request), then
 * each required field by describe. Salesforce's REST API cannot create fields, so `fix` only
 * explains how.
 */
export async function verifySalesforceSetup(
  ctx: SalesforceContext,
  required: FieldRequirement[],
  options: { fix?: boolean | undefined; nowMs: number },
): Promise<SetupReport> {
  const checks: SetupCheck[] = [];
  try {
    const offered = await ctx.call('versions', () =>
      ctx.conn.request<{ version: string }[]>('/services/data'),
    );
    const verdict = judgeApiVersion(
      ctx.conn.version,
      offered.map((v) => v.version),
      options.nowMs,
    );
    const version: SetupCheck = { name: 'API version', ...verdict };
    if (!verdict.ok) {
      checks.push({ name: 'credentials', ok: true, detail: 'signed in' }, version);
      return { ok: false, checks };
    }
    const limits = await ctx.call('limits', () => ctx.conn.limits());
    const api = limits.DailyApiRequests;
    const usage = api ? `; API requests in the last 24 h: ${api.Max - api.Remaining}/${api.Max}` : '';
    const problem = ctx.credentialProblem?.();
    checks.push(
      problem
        ? { name: 'credentials', ok: false, detail: `signed in, but: ${problem}` }
        : { name: 'credentials', ok: true, detail: `signed in${usage}` },
      version,
    );
  } catch (err) {
    if (!(err instanceof CrmError)) throw err;
    const fix =
      err instanceof CrmAuthError ? 'Check the Salesforce credentials (SALESFORCE_* settings)' : undefined;
    checks.push({ name: 'credentials', ok: false, detail: err.message, fix });
    return { ok: false, checks };
  }

  const byObject = new Map<string, FieldRequirement[]>();
  for (const req of required) byObject.set(req.object, [...(byObject.get(req.object) ?? []), req]);
  let missing = 0;
  for (const [object, reqs] of byObject) {
    ctx.describe.invalidate(object);
    let info: ObjectInfo;
    try {
      info = await ctx.describe.get(object);
    } catch (err) {
      if (!(err instanceof CrmError) || err instanceof CrmAuthError) throw err;
      const detail =
        err instanceof CrmSetupError || err.code === 'CRM_NOT_FOUND' ? 'object not available' : err.message;
      checks.push({ name: object, ok: false, detail, fix: `Enable ${object} for the integration user` });
      continue;
    }
    for (const req of reqs) {
      const check = checkField(req, info.fields.get(req.name.toLowerCase()));
      if (!check.ok) missing++;
      checks.push(check);
    }
  }
  if (options.fix && missing > 0) {
    checks.push({
      name: 'fix',
      ok: false,
      detail:
        'Salesforce fields cannot be created through the REST API: create the fields named in each fix, then run doctor again',
    });
  }
  return { ok: checks.every((c) => c.ok), checks };
}
