/**
 * Remembers CRM lookups by participant email for a short while, shares concurrent asks, and
 * gathers live lookups that arrive together into one batch. Why: docs/performance.md, "The lookup
 * cache".
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
  /** Lookups held (expired ones are dropped as new ones come in). */
  size(): number;
}

export function createLookupCache(deps: {
  crm: CrmAdapter;
  mapping: Mapping;
  clock: Clock;
  ttlMs?: number;
  maxEntries?: number;
  /** How long a lookup waits for others to share a batch with (default 10 ms; 0 = the same tick). */
  coalesceMs?: number;
  /** Most participants in one coalesced batch (default 100). */
  maxBatch?: number;
  /** Coalesced batches under way at once; later lookups wait to join the next (default 2). */
  maxInFlight?: number;
}): LookupCache {
  const ttlMs = deps.ttlMs ?? 5 * 60_000;
  const maxEntries = deps.maxEntries ?? 5_000;
  const coalesceMs = deps.coalesceMs ?? 10;
  const maxBatch = deps.maxBatch ?? 100;
  const maxInFlight = deps.maxInFlight ?? 2;
  const fields = lookupFieldsFor(deps.mapping);
  const rule = dealRuleFor(deps.mapping);
  const entries = new Map<string, { at: number; value: Promise<CrmLookup> }>();
  const keyOf = (p: Participant) => `${p.email.trim().toLowerCase()}|${p.company ?? ''}`;
  const fresh = (key: string) => {
    const hit = entries.get(key);
    return hit && deps.clock.now() - hit.at < ttlMs ? hit : undefined;
  };
  const remember = (key: string, value: Promise<CrmLookup>) => {
    const now = deps.clock.now();
    // Re-inserted at the end, so that the map stays in the order of `at` and whatever has expired
    // is at its front: dropped here, or a steady stream of new participants keeps `maxEntries`
    // lookups nobody will read (a soak's worker grew by them, issue 24).
    entries.delete(key);
    entries.set(key, { at: now, value });
    // A failed lookup must not be remembered (nor a newer one for the same key forgotten).
    value.catch(() => {
      if (entries.get(key)?.value === value) entries.delete(key);
    });
    for (const [oldKey, entry] of entries) {
      if (entries.size <= maxEntries && now - entry.at < ttlMs) break;
      entries.delete(oldKey);
    }
    return value;
  };

  // Async, so that an adapter throwing at once still fails only its promise, never a timer callback.
  const single = async (p: Participant) => deps.crm.lookup(p, fields, rule);
  const batch = async (ps: Participant[]) => deps.crm.lookupMany(ps, fields, rule);
  /** A participant's answer from a batch; one the batch left out is looked up singly. */
  const fromBatch = (
    found: Promise<Map<string, CrmLookup>>,
    p: Participant,
    onBatchError?: () => Promise<CrmLookup>,
  ) => found.then((m) => m.get(lookupKey(p.email)) ?? single(p), onBatchError);

  // Lookups waiting for the coalescing window to close, or for a batch under way to finish.
  let waiting: { participant: Participant; settle: (value: Promise<CrmLookup>) => void }[] = [];
  let timer: unknown;
  let inFlight = 0;
  /** A window closed while `maxInFlight` batches were out: the next one to end sends the lookups. */
  let deferred = false;
  const flush = () => {
    if (timer !== undefined) deps.clock.clearTimer(timer);
    timer = undefined;
    deferred = inFlight >= maxInFlight;
    if (deferred || waiting.length === 0) return;
    const gathered = waiting.slice(0, maxBatch);
    waiting = waiting.slice(maxBatch);
    // The batch answers per address, so a second participant with the same address (another
    // company) is looked up on its own.
    const byAddress = new Map<string, (typeof gathered)[number]>();
    for (const item of gathered) {
      const address = lookupKey(item.participant.email);
      if (!byAddress.has(address)) byAddress.set(address, item);
      else item.settle(single(item.participant));
    }
    inFlight += 1;
    const found = batch([...byAddress.values()].map((i) => i.participant));
    for (const { participant, settle } of byAddress.values())
      settle(fromBatch(found, participant, () => single(participant)));
    const ended = () => {
      inFlight -= 1;
      if (deferred) flush();
    };
    found.then(ended, ended);
    // More than one batch's worth waited: the rest goes now, or when a batch ends.
    if (waiting.length > 0) flush();
  };
  const coalesced = (participant: Participant) =>
    new Promise<CrmLookup>((settle) => {
      waiting.push({ participant, settle });
      if (waiting.length >= maxBatch) flush();
      else if (timer === undefined) timer = deps.clock.setTimer(flush, coalesceMs);
    });

  return {
    get(participant) {
      const key = keyOf(participant);
      return fresh(key)?.value ?? remember(key, coalesced(participant));
    },
    async prefetch(participants) {
      const missing = new Map<string, Participant>();
      for (const p of participants) if (!fresh(keyOf(p))) missing.set(keyOf(p), p);
      if (missing.size === 0) return;
      const found = batch([...missing.values()]);
      const values = [...missing].map(([key, p]) => remember(key, fromBatch(found, p)));
      // Settled, so a failed batch is already forgotten and `get` falls back to single lookups.
      await Promise.allSettled(values);
    },
    clear: () => entries.clear(),
    size: () => entries.size,
  };
}
