import { CrmAuthError } from '../errors.js';
import type { SetupCheck } from '../types.js';
import { HubSpotMissingScopesError } from './errorMap.js';
import type { Runner } from './runner.js';
import type { HubSpotApi, PropertyInfo } from './sdk.js';

/** The object types whose records crm-sync reads or writes whatever the mapping says (lookups, calls). */
export const TOUCHED_TYPES = ['contacts', 'companies', 'deals', 'calls'] as const;

export interface ScopeProbe {
  /** Set when HubSpot refused the credential itself (401): nothing else was probed. */
  authError?: CrmAuthError;
  /** Each probed type's properties, where the credential may read them. */
  properties: Map<string, PropertyInfo[]>;
  /** Scope → what crm-sync could not read without it. */
  missing: Map<string, string[]>;
}

/**
 * One cheap read per thing crm-sync touches (one record of each type, one owner, the properties of
 * the types the mapping writes: no scope is asked for that crm-sync would not use anyway), so `doctor` can name every scope the credential lacks at once: HubSpot answers 403
 * MISSING_SCOPES naming the scope (errorMap.ts). Write scopes cannot be probed without writing.
 */
export interface ProbeTypes {
  /** Types whose records crm-sync reads or writes. */
  records: string[];
  /** Types whose properties the mapping writes; the first (contacts) doubles as the credentials check. */
  properties: string[];
}

export async function probeScopes(run: Runner, types: ProbeTypes): Promise<ScopeProbe> {
  const probe: ScopeProbe = { properties: new Map(), missing: new Map() };
  const attempt = async <T>(what: string, read: (api: HubSpotApi) => Promise<T>): Promise<T | undefined> => {
    try {
      return await run(`scope ${what}`, read);
    } catch (e) {
      if (!(e instanceof HubSpotMissingScopesError)) throw e;
      for (const scope of e.scopes.length > 0 ? e.scopes : ['(unnamed)'])
        probe.missing.set(scope, [...(probe.missing.get(scope) ?? []), what]);
      return undefined;
    }
  };
  for (const [i, type] of types.properties.entries()) {
    let props: PropertyInfo[] | undefined;
    try {
      props = await attempt(`${type} properties`, (api) => api.listProperties(type));
    } catch (e) {
      if (i === 0 && e instanceof CrmAuthError) return { ...probe, authError: e };
      throw e;
    }
    if (props) probe.properties.set(type, props);
  }
  for (const type of types.records) {
    await attempt(`${type} records`, (api) =>
      api.search(type, { filterGroups: [], properties: ['hs_object_id'], limit: 1 }),
    );
  }
  await attempt('owners', (api) => api.ownerPage(undefined, 1));
  return probe;
}

export function scopesCheck(probe: ScopeProbe, types: ProbeTypes): SetupCheck {
  if (probe.missing.size === 0) {
    return {
      name: 'scopes',
      ok: true,
      detail: `reads ${types.records.join(', ')}, owners, and the properties of ${types.properties.join(', ')}`,
    };
  }
  const scopes = [...probe.missing.keys()];
  return {
    name: 'scopes',
    ok: false,
    detail: [...probe.missing]
      .map(([scope, what]) => `lacks ${scope} (to read ${what.join(', ')})`)
      .join('\n'),
    fix:
      `grant ${scopes.join(', ')}: Service Key: HubSpot Development > Keys > Service keys (or Settings > ` +
      'Integrations > Service Keys) > the key > Scopes, edit and save; OAuth app: add the scopes to the app ' +
      'and reinstall it; legacy private app: its Scopes tab. Then run "crm-sync doctor" again',
  };
}
