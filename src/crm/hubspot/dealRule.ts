import type { CrmRecord } from '../types.js';

/**
 * Which deals are open (pure; their order is the match rules' job, src/crm/match/deals.ts). HubSpot marks closed deals with
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
