import { validationError } from './errors.js';
import type { PropertyDef, StoredObject } from './model.js';

/**
 * The CRM search semantics (developers.hubspot.com "Search the CRM"): filters in a group are
 * ANDed, groups are ORed (at most 5 groups, 6 filters each, 18 in all); string EQ/NEQ ignore case;
 * IN compares against the lower-cased stored value, so string values in `values` must be
 * lower-case; CONTAINS_TOKEN matches a whole token and accepts `*` wildcards; at most 200 per page.
 */
export interface SearchFilter {
  propertyName?: string;
  operator?: string;
  value?: unknown;
  highValue?: unknown;
  values?: unknown[];
}

export interface SearchRequest {
  filterGroups?: { filters?: SearchFilter[] }[];
  sorts?: unknown[];
  query?: string;
  properties?: string[];
  limit?: number;
  after?: string | number;
}

export const MAX_SEARCH_LIMIT = 200;
const MAX_TOTAL = 10_000;

export function validateSearch(req: SearchRequest): void {
  const groups = req.filterGroups ?? [];
  const total = groups.reduce((n, g) => n + (g.filters?.length ?? 0), 0);
  if (groups.length > 5 || groups.some((g) => (g.filters?.length ?? 0) > 6) || total > 18) {
    throw validationError('Too many filters: at most 5 filterGroups, 6 filters per group and 18 in total.');
  }
  if (req.limit !== undefined && (req.limit < 1 || req.limit > MAX_SEARCH_LIMIT)) {
    throw validationError(`limit must be between 1 and ${MAX_SEARCH_LIMIT}`);
  }
}

export function matchesSearch(
  obj: StoredObject,
  req: SearchRequest,
  defs: Map<string, PropertyDef>,
): boolean {
  const groups = (req.filterGroups ?? []).filter((g) => (g.filters ?? []).length > 0);
  const byQuery = req.query ? matchesQuery(obj, req.query) : true;
  if (groups.length === 0) return byQuery;
  return byQuery && groups.some((g) => (g.filters ?? []).every((f) => matchesFilter(obj, f, defs)));
}

function matchesQuery(obj: StoredObject, query: string): boolean {
  const q = query.toLowerCase();
  return Object.values(obj.properties).some((v) => v.toLowerCase().includes(q));
}

function matchesFilter(obj: StoredObject, f: SearchFilter, defs: Map<string, PropertyDef>): boolean {
  const name = f.propertyName ?? '';
  const stored = name === 'hs_object_id' ? obj.id : obj.properties[name];
  const type = defs.get(name)?.type ?? 'string';
  const value = f.value === undefined || f.value === null ? '' : String(f.value);
  switch (f.operator) {
    case 'HAS_PROPERTY':
      return stored !== undefined && stored !== '';
    case 'NOT_HAS_PROPERTY':
      return stored === undefined || stored === '';
    case 'EQ':
      return stored !== undefined && compare(stored, value, type) === 0;
    case 'NEQ':
      return stored === undefined || compare(stored, value, type) !== 0;
    case 'IN':
      return stored !== undefined && (f.values ?? []).map(String).includes(inForm(stored, type));
    case 'NOT_IN':
      return stored === undefined || !(f.values ?? []).map(String).includes(inForm(stored, type));
    case 'GT':
      return stored !== undefined && compare(stored, value, type) > 0;
    case 'GTE':
      return stored !== undefined && compare(stored, value, type) >= 0;
    case 'LT':
      return stored !== undefined && compare(stored, value, type) < 0;
    case 'LTE':
      return stored !== undefined && compare(stored, value, type) <= 0;
    case 'BETWEEN': {
      const high = String(f.highValue ?? '');
      return stored !== undefined && compare(stored, value, type) >= 0 && compare(stored, high, type) <= 0;
    }
    case 'CONTAINS_TOKEN':
      return stored !== undefined && containsToken(stored, value);
    case 'NOT_CONTAINS_TOKEN':
      return stored === undefined || !containsToken(stored, value);
    default:
      throw validationError(`Unsupported operator ${String(f.operator)} for property ${name}`);
  }
}

function inForm(stored: string, type: string): string {
  return type === 'string' || type === 'enumeration' ? stored.toLowerCase() : stored;
}

/** Numbers and dates compare by value, everything else as case-insensitive text. */
function compare(stored: string, value: string, type: string): number {
  if (type === 'number') return Number(stored) - Number(value);
  if (type === 'datetime' || type === 'date') return toMillis(stored) - toMillis(value);
  return stored.toLowerCase().localeCompare(value.toLowerCase());
}

function toMillis(v: string): number {
  return /^\d+$/.test(v) ? Number(v) : Date.parse(v);
}

function containsToken(stored: string, pattern: string): boolean {
  const escaped = pattern
    .toLowerCase()
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  const re = new RegExp(`^${escaped}$`);
  const tokens = stored.toLowerCase().split(/[\s,;]+/);
  return re.test(stored.toLowerCase()) || tokens.some((t) => re.test(t));
}

/** Sorts as given (`"name"`, `"-name"` or `{propertyName, direction}`), else by id. */
export function sortObjects(
  objs: StoredObject[],
  sorts: unknown[] | undefined,
  defs: Map<string, PropertyDef>,
) {
  const keys = (sorts ?? []).map((s) => {
    if (typeof s === 'string') return { name: s.replace(/^-/, ''), desc: s.startsWith('-') };
    const o = (s ?? {}) as { propertyName?: string; direction?: string };
    return { name: o.propertyName ?? '', desc: o.direction === 'DESCENDING' };
  });
  return [...objs].sort((a, b) => {
    for (const k of keys) {
      const av = a.properties[k.name];
      const bv = b.properties[k.name];
      if (av === bv) continue;
      if (av === undefined) return 1; // unset values sort last either way
      if (bv === undefined) return -1;
      const c = compare(av, bv, defs.get(k.name)?.type ?? 'string');
      if (c !== 0) return k.desc ? -c : c;
    }
    return Number(a.id) - Number(b.id);
  });
}

/** One page: `after` is the offset of the next result, as an opaque string. */
export function pageOf<T>(items: T[], limit: number | undefined, after: string | number | undefined) {
  const start = after === undefined || after === '' ? 0 : Number(after);
  if (!Number.isInteger(start) || start < 0) throw validationError(`Invalid after value ${String(after)}`);
  const size = limit ?? 10;
  const capped = items.slice(0, MAX_TOTAL);
  const page = capped.slice(start, start + size);
  const next = start + size < capped.length ? String(start + size) : undefined;
  return { page, next, total: items.length };
}
