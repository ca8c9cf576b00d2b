import type { CrmRecord, DealRule } from '../types.js';

/**
 * Which deals are open and in what order they are offered (pure). HubSpot marks closed deals with
 * the calculated `hs_is_closed`; the stage ids `closedwon`/`closedlost` of the default pipeline
 * are checked too, for portals where the calculated property is absent.
 */
export const CLOSED_STAGES: ReadonlySet<string> = new Set(['closedwon', 'closedlost']);

export function isOpenDeal(deal: CrmRecord): boolean {
  const p = deal.properties;
  if (String(p.hs_is_closed ?? '').toLowerCase() === 'true') return false;
  if (String(p.hs_is_closed_won ?? '').toLowerCase() === 'true') return false;
  return !CLOSED_STAGES.has(String(p.dealstage ?? '').toLowerCase());
}

/** Open deals ordered by the rule; ties (and missing values, which go last) by last modified. */
export function chooseDeals(deals: CrmRecord[], rule: DealRule): CrmRecord[] {
  const open = deals.filter(isOpenDeal);
  const key = (d: CrmRecord): number | undefined => {
    switch (rule.orderBy) {
      case 'close_date_asc':
      case 'close_date_desc':
        return time(d.properties.closedate);
      case 'amount_desc': {
        const n = Number(d.properties.amount);
        return d.properties.amount === null ||
          d.properties.amount === undefined ||
          d.properties.amount === '' ||
          !Number.isFinite(n)
          ? undefined
          : n;
      }
      case 'last_modified_desc':
        return modified(d);
    }
  };
  const ascending = rule.orderBy === 'close_date_asc';
  const sorted = [...open].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    if (ka !== kb) {
      if (ka === undefined) return 1;
      if (kb === undefined) return -1;
      return ascending ? ka - kb : kb - ka;
    }
    const ma = modified(a) ?? 0;
    const mb = modified(b) ?? 0;
    if (ma !== mb) return mb - ma;
    return Number(a.id) - Number(b.id);
  });
  return sorted.slice(0, Math.max(0, rule.limit));
}

function modified(d: CrmRecord): number | undefined {
  return time(d.properties.hs_lastmodifieddate);
}

/** HubSpot dates arrive as ISO strings or epoch milliseconds. */
function time(value: unknown): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const s = String(value);
  const t = /^\d+$/.test(s) ? Number(s) : Date.parse(s);
  return Number.isFinite(t) ? t : undefined;
}
