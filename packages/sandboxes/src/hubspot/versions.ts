/**
 * Which API generation a request path belongs to. HubSpot's REST APIs are date-versioned since
 * 2026-03-30 (`/crm/objects/2026-09/contacts`, `/oauth/2026-03/token`; HubSpot API reference,
 * "2026-03 overview"); numbered paths (`/crm/v3/`, `/crm/v4/`, `/oauth/v1/`) are legacy and go
 * unsupported in 2027 (changelog "Legacy APIs and Apps: What's Going Unsupported and When").
 * The sandbox counts requests by prefix so a test run can prove no legacy path was used. Its routes
 * (routes/*.ts) serve `/{api}/{version}/...` with the 2026-09 shapes: the objects, properties and
 * owners bodies of v3 and the association bodies of v4, unchanged in the dated reference (HubSpot
 * API reference, 2026-09; the 2026-09 folders of HubSpot-public-api-spec-collection).
 */

/** The date versions the sandbox serves (HubSpot releases each March and September). */
export const DATED_VERSIONS: readonly string[] = ['2026-03', '2026-09'];

/** The token endpoint (changelog "v1 OAuth API deprecation": move to `/oauth/2026-03/token`). */
export const TOKEN_PATH = '/oauth/2026-03/token';

export interface PathClass {
  /** e.g. `/crm/objects/2026-09`, `/crm/v3/objects`, `/oauth/v1`. */
  prefix: string;
  kind: 'dated' | 'legacy' | 'other';
  /** The date in a dated path. */
  version?: string;
}

const DATED = /^\/(crm\/[a-z-]+|[a-z-]+)\/(\d{4}-\d{2})(?=\/|$)/;
const LEGACY_CRM = /^\/crm\/(v\d+)\/([a-z-]+)(?=\/|$)/;
const LEGACY = /^\/([a-z-]+)\/(v\d+)(?=\/|$)/;

export function classifyPath(path: string): PathClass {
  const dated = DATED.exec(path);
  if (dated) return { prefix: `/${dated[1]}/${dated[2]}`, kind: 'dated', version: dated[2]! };
  const crm = LEGACY_CRM.exec(path);
  if (crm) return { prefix: `/crm/${crm[1]}/${crm[2]}`, kind: 'legacy' };
  const legacy = LEGACY.exec(path);
  if (legacy) return { prefix: `/${legacy[1]}/${legacy[2]}`, kind: 'legacy' };
  return { prefix: `/${path.split('/')[1] ?? ''}`, kind: 'other' };
}

/**
 * The dated path a legacy one maps to, for a sandbox started with `legacyPaths` (the v3/v4
 * resources kept their bodies in the dated versions: `/crm/v3/objects/...` and
 * `/crm/v4/objects/...` → `/crm/objects/{v}/...`, `/crm/v4/associations/...` →
 * `/crm/associations/{v}/...`, `/oauth/v1/token` → the token path).
 */
export function datedEquivalent(url: string, version: string): string {
  if (url.startsWith('/oauth/v1/token')) return TOKEN_PATH + url.slice('/oauth/v1/token'.length);
  return url.replace(LEGACY_CRM, (_m, _v: string, api: string) => `/crm/${api}/${version}`);
}
