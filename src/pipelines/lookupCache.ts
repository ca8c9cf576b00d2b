/**
 * Remembers CRM lookups by participant email for a short while. The same person is often on
 * several calls of a backfill, and the context push and the write-back of one call need the same
 * records; the cache turns those repeats into zero CRM requests. Concurrent asks share one lookup.
 */
import type { CrmAdapter, CrmLookup, Participant } from '../crm/types.js';
import type { Mapping } from '../mapping/types.js';
import { dealRuleFor, lookupFieldsFor } from '../mapping/index.js';
import type { Clock } from '../util/clock.js';

export interface LookupCache {
  get(participant: Participant): Promise<CrmLookup>;
  clear(): void;
}

export function createLookupCache(deps: {
  crm: CrmAdapter;
  mapping: Mapping;
  clock: Clock;
  ttlMs?: number;
  maxEntries?: number;
}): LookupCache {
  const ttlMs = deps.ttlMs ?? 5 * 60_000;
  const maxEntries = deps.maxEntries ?? 5_000;
  const fields = lookupFieldsFor(deps.mapping);
  const rule = dealRuleFor(deps.mapping);
  const entries = new Map<string, { at: number; value: Promise<CrmLookup> }>();

  return {
    get(participant) {
      const key = `${participant.email.trim().toLowerCase()}|${participant.company ?? ''}`;
      const now = deps.clock.now();
      const hit = entries.get(key);
      if (hit && now - hit.at < ttlMs) return hit.value;
      const value = deps.crm.lookup(participant, fields, rule);
      entries.set(key, { at: now, value });
      // A failed lookup must not be remembered.
      value.catch(() => entries.delete(key));
      if (entries.size > maxEntries) {
        const oldest = entries.keys().next().value;
        if (oldest !== undefined) entries.delete(oldest);
      }
      return value;
    },
    clear: () => entries.clear(),
  };
}
