import { CrmNotFoundError } from '../errors.js';
import type { CrmRecord } from '../types.js';
import type { Runner } from './runner.js';
import type { OwnerInfo, SdkObject } from './sdk.js';

/**
 * The batched reads behind `lookupMany`: searches with `IN`, v4 association batch reads, object
 * batch reads and the owner list. Each helper pages and chunks to HubSpot's limits itself.
 */

/** Records per batch read (HubSpot's batch endpoints take 100 inputs). */
export const BATCH_READ_MAX = 100;
/** Values per `IN` filter. HubSpot's docs name no maximum; 100 matches its batch endpoints. */
export const IN_MAX_VALUES = 100;
/** Search results per page (HubSpot's maximum since September 2024). */
export const SEARCH_PAGE_MAX = 200;
/** Inputs per v4 association batch read (HubSpot refuses more than 1,000 since February 2025). */
export const ASSOCIATION_BATCH_MAX = 1000;
/** Owners per page of `GET /crm/owners/{version}` (its maximum). */
export const OWNER_PAGE_MAX = 500;
/** Up to this many distinct owners are read one by one; more, and the owner list is cheaper. */
export const OWNER_SINGLE_READS_MAX = 2;

/** The values one lookup key searches for (a domain and its `www.` form, an email, a name). */
export interface SearchGroup {
  key: string;
  values: string[];
}

/** Groups packed into chunks of at most `max` values; a group never straddles two chunks. */
export function packGroups(groups: SearchGroup[], max = IN_MAX_VALUES): SearchGroup[][] {
  const chunks: SearchGroup[][] = [];
  let current: SearchGroup[] = [];
  let size = 0;
  for (const g of groups) {
    if (size + g.values.length > max && current.length > 0) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(g);
    size += g.values.length;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/**
 * Searches `property IN values` and gives each group the results matching one of its values, in
 * the order HubSpot returned them: the same records, in the same order, that an EQ search for
 * that group alone would give, because each group is answered from the one request holding all
 * of its values. `IN` compares lower-cased stored values, so the values are lower-cased.
 */
export async function searchGroups(
  run: Runner,
  type: string,
  property: string,
  groups: SearchGroup[],
  properties: string[],
): Promise<Map<string, SdkObject[]>> {
  const out = new Map<string, SdkObject[]>();
  const lowered = dedupeGroups(groups).map((g) => ({
    key: g.key,
    values: [...new Set(g.values.map((v) => v.toLowerCase()))],
  }));
  for (const chunk of packGroups(lowered)) {
    const values = [...new Set(chunk.flatMap((g) => g.values))];
    const found: SdkObject[] = [];
    let after: string | undefined;
    do {
      const page = await run(`search ${type}`, (api) =>
        api.search(type, {
          filterGroups: [{ filters: [{ propertyName: property, operator: 'IN', values }] }],
          properties,
          limit: SEARCH_PAGE_MAX,
          ...(after ? { after } : {}),
        }),
      );
      found.push(...page.results);
      after = page.after;
    } while (after);
    for (const g of chunk) {
      const wanted = new Set(g.values);
      out.set(
        g.key,
        found.filter((o) => wanted.has((o.properties[property] ?? '').toLowerCase())),
      );
    }
  }
  return out;
}

export type Links = { toId: string; typeIds: number[] }[];

/** Each id's associated records of `to`, in HubSpot's order, following each input's paging. */
export async function associationsOf(
  run: Runner,
  from: string,
  to: string,
  ids: string[],
): Promise<Map<string, Links>> {
  const out = new Map<string, Links>();
  let pending: { id: string; after?: string | undefined }[] = [...new Set(ids)].map((id) => ({ id }));
  while (pending.length > 0) {
    const next: typeof pending = [];
    for (let i = 0; i < pending.length; i += ASSOCIATION_BATCH_MAX) {
      const chunk = pending.slice(i, i + ASSOCIATION_BATCH_MAX);
      // An id without links comes back as a NO_ASSOCIATIONS_FOUND error in a 207: it has none.
      const r = await run(`associations ${from}->${to}`, (api) => api.associationBatch(from, to, chunk));
      for (const result of r.results) {
        out.set(result.fromId, [...(out.get(result.fromId) ?? []), ...result.to]);
        if (result.after) next.push({ id: result.fromId, after: result.after });
      }
    }
    pending = next;
  }
  return out;
}

/** Records by id, in batch reads of 100; ids HubSpot does not return are left out. */
export async function readObjects(
  run: Runner,
  type: string,
  ids: string[],
  properties: string[],
): Promise<Map<string, SdkObject>> {
  const unique = [...new Set(ids)];
  const out = new Map<string, SdkObject>();
  for (let i = 0; i < unique.length; i += BATCH_READ_MAX) {
    const chunk = unique.slice(i, i + BATCH_READ_MAX);
    const r = await run(`read ${type}`, (api) => api.batchRead(type, chunk, properties));
    for (const o of r.results) out.set(o.id, o);
  }
  return out;
}

/**
 * Owners by id, each as `readOwner` gives it (null when not active). HubSpot has no batch read of
 * owners: a few are read one by one, more through the list of active owners, a bounded number of
 * pages of it, and any still missing one by one.
 */
export async function readOwners(
  run: Runner,
  ids: string[],
  fields: string[],
): Promise<Map<string, CrmRecord | null>> {
  const wanted = new Set(ids);
  const out = new Map<string, CrmRecord | null>();
  if (wanted.size > OWNER_SINGLE_READS_MAX) {
    // Never more pages than single reads would have cost.
    const maxPages = wanted.size - 1;
    let after: string | undefined;
    for (let page = 0; page < maxPages; page++) {
      const r = await run('list owners', (api) => api.ownerPage(after, OWNER_PAGE_MAX));
      for (const o of r.results) if (wanted.has(o.id)) out.set(o.id, ownerRecord(o, fields));
      after = r.after;
      if (!after || out.size === wanted.size) break;
    }
    if (!after) for (const id of wanted) if (!out.has(id)) out.set(id, null); // not an active owner
  }
  for (const id of wanted) {
    if (!out.has(id)) out.set(id, await readOwner(run, id, fields));
  }
  return out;
}

function dedupeGroups(groups: SearchGroup[]): SearchGroup[] {
  return [...new Map(groups.map((g) => [g.key, g])).values()];
}

export async function readOwner(
  run: Runner,
  ownerId: string | undefined,
  fields: string[],
): Promise<CrmRecord | null> {
  if (!ownerId) return null;
  try {
    return ownerRecord(await run('read owner', (api) => api.owner(ownerId)), fields);
  } catch (e) {
    if (e instanceof CrmNotFoundError) return null; // owner deactivated or removed
    throw e;
  }
}

/** An owner as a record, with the asked-for fields (all of them when none are named). */
export function ownerRecord(o: OwnerInfo, fields: string[]): CrmRecord {
  const all: Record<string, unknown> = {
    email: o.email,
    firstName: o.firstName,
    lastName: o.lastName,
    userId: o.userId,
  };
  const properties = fields.length === 0 ? all : Object.fromEntries(fields.map((f) => [f, all[f] ?? null]));
  return { type: 'owner', id: o.id, properties };
}
