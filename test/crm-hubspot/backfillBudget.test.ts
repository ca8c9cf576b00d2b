import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  lookupKey,
  type ActivityWrite,
  type CrmAdapter,
  type CrmLookup,
  type FollowupWrite,
  type Participant,
} from '../../src/crm/types.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { adapterFor, counts, FIELDS, sandbox, total } from './helpers.js';
import { populate } from './population.js';

const CALLS = 1000;
const BATCH = 100;
// No request limits (searches included): these tests compare answers, not pacing.
const FAST = { perWindow: 1_000_000, searchesPerSecond: 1_000_000 };

/**
 * The budget: a backfill of 1,000 calls costs at most one CRM request per call on
 * average, lookups included. Each write-back batch of 100 calls looks its participants up with
 * one `lookupMany` (no cache across batches, so every batch pays its own lookups), then writes
 * the 100 activities and 100 follow-up notes.
 */
describe('HubSpot backfill request budget', () => {
  let sb: HubSpotSandbox;
  let adapter: CrmAdapter;

  beforeAll(async () => {
    sb = await sandbox({ limits: FAST });
    adapter = adapterFor(sb, { limits: FAST });
  });
  afterAll(() => sb.close());

  it('backfills 1,000 calls over ~290 distinct participants in at most 1,000 requests', async () => {
    const people = populate(sb);
    // Call i is with participant (37·i mod n): every participant recurs, 100 distinct per batch.
    const participantOf = (i: number): Participant => people[(i * 37) % people.length]!;
    sb.state.requests.clear();

    let lookupRequests = 0;
    for (let start = 0; start < CALLS; start += BATCH) {
      const ids = Array.from({ length: BATCH }, (_, k) => start + k);
      const before = total(sb);
      const found = await adapter.lookupMany(ids.map(participantOf), FIELDS);
      lookupRequests += total(sb) - before;
      const lookupOf = (i: number): CrmLookup => found.get(lookupKey(participantOf(i).email))!;
      const activities = await adapter.upsertActivities(ids.map((i) => activity(i, lookupOf(i))));
      const followups = await adapter.upsertFollowups(ids.map((i) => followup(i, lookupOf(i))));
      expect([...activities, ...followups].filter((r) => !r.ok)).toEqual([]);
    }

    const requests = total(sb);
    // The measured number, for the report (vitest shows it with the test).
    process.stdout.write(
      `HubSpot backfill: ${CALLS} calls, ${new Set(people.map((p) => lookupKey(p.email))).size} distinct ` +
        `participants -> ${requests} requests ` +
        `(${lookupRequests} lookup, ${requests - lookupRequests} write)` +
        `\n${JSON.stringify(counts(sb), null, 2)}\n`,
    );
    expect(sb.state.store.objects.calls.size).toBe(CALLS);
    expect(sb.state.store.objects.notes.size).toBe(CALLS);
    expect(adapter.usage().requests).toBe(requests);
    expect(requests).toBeLessThanOrEqual(CALLS);
  });
});

function links(l: CrmLookup): ActivityWrite['links'] {
  return { contactId: l.contact?.id, companyId: l.company?.id, dealId: l.deals[0]?.id };
}

function activity(i: number, l: CrmLookup): ActivityWrite {
  return {
    callId: `backfill-${i}`,
    properties: {
      hs_timestamp: '2026-01-15T10:00:00.000Z',
      hs_call_title: `Call ${i}`,
      hs_call_body: 'Summary',
      hs_call_duration: 1_200_000,
      crmsync_score_overall: 70 + (i % 30),
    },
    links: links(l),
  };
}

function followup(i: number, l: CrmLookup): FollowupWrite {
  return {
    callId: `backfill-${i}`,
    draftId: `backfill-draft-${i}`,
    key: `backfill-draft-${i}`,
    kind: 'note',
    properties: { hs_note_body: `<p>Next steps for call ${i}</p>` },
    links: links(l),
  };
}
