/**
 * Every HubSpot path crm-sync requests, on HubSpot's date-versioned APIs: `/{api}/{version}/...`
 * replaced the numbered `/crm/v3/`, `/crm/v4/` and `/oauth/v1/` paths on 2026-03-30 (HubSpot API
 * reference, "2026-03 overview"); the numbered paths go unsupported in 2027 (changelog "Legacy
 * APIs and Apps: What's Going Unsupported and When"). One module builds them, so one setting
 * (`HUBSPOT_API_VERSION`) moves every request.
 */
export const DEFAULT_HUBSPOT_API_VERSION = '2026-09';

/** The token endpoint's own date version (changelog "v1 OAuth API deprecation", 2027-02-16). */
export const HUBSPOT_OAUTH_VERSION = '2026-03';

/** HubSpot ships a date version each March and September, the first on 2026-03. */
export function isHubSpotApiVersion(v: string): boolean {
  return /^\d{4}-(03|09)$/.test(v) && v >= '2026-03';
}

export interface HubSpotPaths {
  /** `/crm/objects/{v}/{type}[/...]`: search, batch read/upsert/update, a record, its associations. */
  objects(type: string, ...rest: string[]): string;
  /** `/crm/associations/{v}/{from}/{to}/batch/{action}` (v4 bodies). */
  associationBatch(from: string, to: string, action: 'read' | 'create' | 'archive'): string;
  /** `/crm/properties/{v}/{type}[/...]`. */
  properties(type: string, ...rest: string[]): string;
  /** `/crm/owners/{v}[/{id}]`. */
  owners(id?: string): string;
  token: string;
}

export function hubSpotPaths(version: string): HubSpotPaths {
  const join = (...parts: string[]) => parts.map((p) => `/${encodeURIComponent(p)}`).join('');
  return {
    objects: (type, ...rest) => `/crm/objects/${version}${join(type, ...rest)}`,
    associationBatch: (from, to, action) => `/crm/associations/${version}${join(from, to, 'batch', action)}`,
    properties: (type, ...rest) => `/crm/properties/${version}${join(type, ...rest)}`,
    owners: (id) => `/crm/owners/${version}${id === undefined ? '' : join(id)}`,
    token: `/oauth/${HUBSPOT_OAUTH_VERSION}/token`,
  };
}
