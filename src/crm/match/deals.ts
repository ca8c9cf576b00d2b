/**
 * Which deals a call is about (pure): the open ones, in the deal rule's order, at most its limit.
 * Ties on the rule's value, and values that are missing (they go last), are broken by the most
 * recently modified, then by id.
 */
import type { DealRule } from '../types.js';
import type { DealCandidate } from './candidates.js';
import type { MatchLoser } from '../types.js';

export interface RankedDeals {
  /** How many of the deals are open. */
  open: number;
  chosen: DealCandidate[];
  rejected: MatchLoser[];
}

const day = (t: number) => new Date(t).toISOString().slice(0, 10);

/** The rule's value of a deal, and how a reason names it. */
function keyOf(rule: DealRule, d: DealCandidate): number | null {
  switch (rule.orderBy) {
    case 'close_date_asc':
    case 'close_date_desc':
      return d.closeDate;
    case 'amount_desc':
      return d.amount;
    case 'last_modified_desc':
      return d.modifiedAt;
  }
}

export function describeKey(rule: DealRule, d: DealCandidate): string {
  const k = keyOf(rule, d);
  switch (rule.orderBy) {
    case 'close_date_asc':
      return k === null ? 'no close date' : `soonest close date ${day(k)}`;
    case 'close_date_desc':
      return k === null ? 'no close date' : `latest close date ${day(k)}`;
    case 'amount_desc':
      return k === null ? 'no amount' : `largest amount ${k}`;
    case 'last_modified_desc':
      return k === null ? 'no modification date' : `most recently modified ${day(k)}`;
  }
}

function whyLater(rule: DealRule, d: DealCandidate, first: DealCandidate): string {
  const k = keyOf(rule, d);
  const kf = keyOf(rule, first);
  if (k === kf) return 'same rank, modified less recently';
  if (k === null) return `${describeKey(rule, d)} (ranked last)`;
  switch (rule.orderBy) {
    case 'close_date_asc':
      return `closes later (${day(k)})`;
    case 'close_date_desc':
      return `closes sooner (${day(k)})`;
    case 'amount_desc':
      return `smaller amount (${k})`;
    case 'last_modified_desc':
      return `modified less recently (${day(k)})`;
  }
}

/** Sorts open deals by the rule; closed ones and those past the limit are rejected with why. */
export function rankDeals(deals: DealCandidate[], rule: DealRule): RankedDeals {
  const unique = [...new Map(deals.map((d) => [d.record.id, d])).values()];
  const open = unique.filter((d) => d.open);
  const ascending = rule.orderBy === 'close_date_asc';
  const sorted = [...open].sort((a, b) => {
    const ka = keyOf(rule, a);
    const kb = keyOf(rule, b);
    if (ka !== kb) {
      if (ka === null) return 1;
      if (kb === null) return -1;
      return ascending ? ka - kb : kb - ka;
    }
    const ma = a.modifiedAt ?? 0;
    const mb = b.modifiedAt ?? 0;
    if (ma !== mb) return mb - ma;
    return a.record.id.localeCompare(b.record.id, 'en', { numeric: true });
  });
  const limit = Math.max(0, Math.floor(rule.limit));
  const chosen = sorted.slice(0, limit);
  const first = chosen[0];
  const rejected: MatchLoser[] = [
    ...sorted.slice(1).map((d, i) => ({
      id: d.record.id,
      label: d.name ?? d.record.id,
      reason:
        i + 1 >= limit
          ? `${whyLater(rule, d, first!)}; beyond the deal limit of ${limit}`
          : whyLater(rule, d, first!),
    })),
    ...unique
      .filter((d) => !d.open)
      .map((d) => ({
        id: d.record.id,
        label: d.name ?? d.record.id,
        reason: `closed${d.stage ? ` (${d.stage})` : ''}`,
      })),
  ];
  return { open: open.length, chosen, rejected };
}
