/**
 * Remembers CRM lookups by participant email for a short while. The same person is often on
 * several calls of a backfill, and the context push and the write-back of one call need the same
 * records; the cache turns those repeats into zero CRM requests. Concurrent asks share one lookup.
 */
import { lookupKey, type CrmAdapter, type CrmLookup, type Participant } from '../crm/types.js';
import type { Mapping } from '../mapping/types.js';
import { dealRuleFor, lookupFieldsFor } from '../mapping/index.js';
import type { Clock } from '../util/clock.js';

export interface LookupCache {
  get(participant: Participant): Promise<CrmLookup>;
  /**
   * Looks up many participants at once through the adapter's batch lookup, so
   * a write-back batch costs a few CRM requests instead of a few per call.
   */
  prefetch(participants: Participant[]): Promise<void>;
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
  const keyOf = (p: Participant) => `${p.email.trim().toLowerCase()}|${p.company ?? ''}`;
  const fresh = (key: string) => {
    const hit = entries.get(key);
    return hit && deps.clock.now() - hit.at < ttlMs ? hit : undefined;
  };
  const remember = (key: string, value: Promise<CrmLookup>) => {
    entries.set(key, { at: deps.clock.now(), value });
    // A failed lookup must not be remembered.
    value.catch(() => entries.delete(key));
    if (entries.size > maxEntries) {
      const oldest = entries.keys().next().value;
      if (oldest !== undefined) entries.delete(oldest);
    }
    return value;
  };

  return {
    get(participant) {
      const key = keyOf(participant);
      return fresh(key)?.value ?? remember(key, deps.crm.lookup(participant, fields, rule));
    },
    async prefetch(participants) {
      const missing = new Map<string, Participant>();
      for (const p of participants) if (!fresh(keyOf(p))) missing.set(keyOf(p), p);
      if (missing.size === 0) return;
      const found = deps.crm.lookupMany([...missing.values()], fields, rule);
      const values = [...missing].map(([key, p]) =>
        remember(
          key,
          found.then((m) => m.get(lookupKey(p.email)) ?? deps.crm.lookup(p, fields, rule)),
        ),
      );
      // Settled, so a failed batch is already forgotten and `get` falls back to single lookups.
      await Promise.allSettled(values);
    },
    clear: () => entries.clear(),
  };
}
