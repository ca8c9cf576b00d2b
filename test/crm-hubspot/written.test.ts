import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActivityWrite, CrmAdapter, FollowupWrite } from '../../src/crm/types.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { adapterFor, counts, sandbox, total } from './helpers.js';

const QUERY = {
  activityIdField: 'crmsync_call_id',
  followups: { kind: 'note' as const, idField: 'crmsync_followup_id', callIdField: 'crmsync_call_id' },
};

function activity(callId: string): ActivityWrite {
  return {
    callId,
    properties: { hs_timestamp: '2026-01-15T10:00:00.000Z', hs_call_title: `Call ${callId}` },
    links: {},
  };
}

function draft(callId: string, n: number): FollowupWrite {
  const draftId = `${callId}-draft-${n}`;
  return {
    callId,
    draftId,
    key: draftId,
    kind: 'note',
    properties: { hs_note_body: 'Follow-up', crmsync_followup_id: draftId, crmsync_call_id: callId },
    links: {},
  };
}

describe('HubSpot findWritten (real SDK against the sandbox)', () => {
  let sb: HubSpotSandbox;
  let adapter: CrmAdapter;
  const ids = Array.from({ length: 120 }, (_, i) => `call-${i}`);
  const activityIds = new Map<string, string>();
  const noteIds = new Map<string, string>();

  beforeAll(async () => {
    sb = await sandbox();
    adapter = adapterFor(sb);
    for (const r of await adapter.upsertActivities(ids.map(activity))) if (r.ok) activityIds.set(r.key, r.id);
    // The first 60 calls have two drafts each; the rest have their activity only.
    const drafts = ids.slice(0, 60).flatMap((id) => [draft(id, 1), draft(id, 2)]);
    for (const r of await adapter.upsertFollowups(drafts)) if (r.ok) noteIds.set(r.key, r.id);
    sb.state.requests.clear();
  });
  afterAll(() => sb.close());

  it('finds each call engagement and the notes carrying its call id, in one search per 100 ids of each', async () => {
    const unknown = ['call-never-1', 'call-never-2', 'call-never-3', 'call-never-4', 'call-never-5'];
    const found = await adapter.findWritten([...ids, ...unknown], QUERY);

    expect(found.size).toBe(120);
    for (const id of unknown) expect(found.has(id)).toBe(false);
    expect(found.get('call-0')).toEqual({
      activityId: activityIds.get('call-0'),
      followups: expect.arrayContaining([
        { draftId: 'call-0-draft-1', crmId: noteIds.get('call-0-draft-1') },
        { draftId: 'call-0-draft-2', crmId: noteIds.get('call-0-draft-2') },
      ]),
    });
    expect(found.get('call-0')!.followups).toHaveLength(2);
    expect(found.get('call-100')).toEqual({ activityId: activityIds.get('call-100'), followups: [] });
    // 125 ids: two call searches; 120 calls found: two note searches (up to 200 notes a page).
    expect(counts(sb)).toEqual({
      'POST /crm/objects/2026-09/calls/search': 2,
      'POST /crm/objects/2026-09/notes/search': 2,
    });
    expect(total(sb)).toBe(4);
  });

  it('asks for no drafts when no activity is found, and finds only activities without a follow-up query', async () => {
    sb.state.requests.clear();
    expect((await adapter.findWritten(['call-never-1'], QUERY)).size).toBe(0);
    expect(total(sb)).toBe(1);
    const activitiesOnly = await adapter.findWritten(['call-0']);
    expect(activitiesOnly.get('call-0')).toEqual({ activityId: activityIds.get('call-0'), followups: [] });
    expect(total(sb)).toBe(2);
  });
});
