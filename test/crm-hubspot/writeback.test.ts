import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CrmRejectedError } from '../../src/crm/errors.js';
import type { ActivityWrite, CrmAdapter, FollowupWrite } from '../../src/crm/types.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { adapterFor, counts, sandbox, total } from './helpers.js';

function call(
  callId: string,
  sb: HubSpotSandbox,
  extra: Partial<ActivityWrite['properties']> = {},
): ActivityWrite {
  return {
    callId,
    properties: {
      hs_timestamp: '2026-01-15T10:00:00.000Z',
      hs_call_title: `Discovery call ${callId}`,
      hs_call_body: 'Summary',
      hs_call_duration: 1_800_000,
      crmsync_score_overall: 82,
      ...extra,
    },
    links: {
      contactId: sb.state.refs.contacts.jane,
      companyId: sb.state.refs.companies.acme,
      dealId: sb.state.refs.deals.acmeAddon,
    },
  };
}

describe('HubSpot adapter write-back (real SDK against the sandbox)', () => {
  let sb: HubSpotSandbox;
  let adapter: CrmAdapter;

  beforeAll(async () => {
    sb = await sandbox();
    adapter = adapterFor(sb);
  });
  afterAll(() => sb.close());
  beforeEach(() => sb.state.reset());

  const calls = () => [...sb.state.store.objects.calls.values()];
  const linksOf = (type: 'calls' | 'notes' | 'tasks', id: string) =>
    sb.state.store.associations
      .filter((a) => a.fromType === type && a.fromId === id)
      .map((a) => `${a.toType}:${a.toId}:${a.typeId}`)
      .sort();

  it('writes the same call three times as one call engagement, updated, with its associations', async () => {
    const first = await adapter.upsertActivities([call('call-1', sb)]);
    expect(first).toEqual([{ key: 'call-1', ok: true, id: expect.any(String), created: true }]);
    await adapter.upsertActivities([call('call-1', sb, { crmsync_score_overall: 85 })]);
    const third = await adapter.upsertActivities([call('call-1', sb, { crmsync_score_overall: 90 })]);
    expect(third[0]).toMatchObject({ ok: true, created: false });
    expect(calls()).toHaveLength(1);
    const [stored] = calls();
    expect(stored?.id).toBe((first[0] as { id: string }).id);
    expect(stored?.properties).toMatchObject({ crmsync_call_id: 'call-1', crmsync_score_overall: '90' });
    const { contacts, companies, deals } = sb.state.refs;
    expect(linksOf('calls', stored!.id)).toEqual(
      [
        `contacts:${contacts.jane}:194`,
        `companies:${companies.acme}:182`,
        `deals:${deals.acmeAddon}:206`,
      ].sort(),
    );
    // 1 upsert + 3 association batches per write
    expect(counts(sb)['POST /crm/objects/2026-09/calls/batch/upsert']).toBe(3);
    expect(total(sb)).toBe(12);
  });

  // Issue 22, defect 8: a replay after the match changed must not leave the call on two deals.
  it("makes a re-written engagement's links equal the current match: stale ones archived", async () => {
    const { contacts, companies, deals } = sb.state.refs;
    const [first] = await adapter.upsertActivities([call('moved-1', sb)]);
    const id = (first as { id: string }).id;
    // Linked by hand meanwhile to a second deal: the write-back owns this engagement's links.
    await adapter.moveActivityLinks([
      { callId: 'moved-1', activityId: id, from: {}, to: { dealId: deals.acmeExpansion } },
    ]);
    const rewrite = call('moved-1', sb);
    rewrite.links = { contactId: contacts.bob, companyId: companies.acme, dealId: deals.acmeExpansion };
    const [again] = await adapter.upsertActivities([rewrite]);
    expect(again).toMatchObject({ ok: true, created: false });
    expect(linksOf('calls', id)).toEqual(
      [
        `contacts:${contacts.bob}:194`,
        `companies:${companies.acme}:182`,
        `deals:${deals.acmeExpansion}:206`,
      ].sort(),
    );
    // Without a deal in the match now, the call is on none.
    const [third] = await adapter.upsertActivities([{ ...rewrite, links: { contactId: contacts.bob } }]);
    expect(third).toMatchObject({ ok: true });
    expect(linksOf('calls', id)).toEqual([`contacts:${contacts.bob}:194`]);
  });

  it("upserts on the mapping's idField, which the properties carry too", async () => {
    const w = { ...call('mapped-1', sb, { crmsync_call_id: 'mapped-1' }), idField: 'crmsync_call_id' };
    await adapter.upsertActivities([w]);
    const [again] = await adapter.upsertActivities([w]);
    expect(again).toMatchObject({ ok: true, created: false });
    expect(calls()).toHaveLength(1);
  });

  it('writes 100 calls with one upsert and three association batches', async () => {
    const writes = Array.from({ length: 100 }, (_, i) => call(`bulk-${i}`, sb));
    const results = await adapter.upsertActivities(writes);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(results.map((r) => r.key)).toEqual(writes.map((w) => w.callId));
    expect(calls()).toHaveLength(100);
    expect(total(sb)).toBe(4);
    // Results are matched by call id, not by position (the sandbox answers in reverse order).
    for (const r of results) {
      expect(r.ok && sb.state.store.objects.calls.get(r.id)?.properties.crmsync_call_id).toBe(r.key);
    }
    expect(sb.state.store.associations.filter((a) => a.fromType === 'calls')).toHaveLength(300);
  });

  it('splits 250 calls into batches of 100 and writes a repeated call id once', async () => {
    const writes = Array.from({ length: 250 }, (_, i) => call(`big-${i}`, sb));
    writes.push(call('big-7', sb, { crmsync_score_overall: 99 }));
    const results = await adapter.upsertActivities(writes);
    expect(results).toHaveLength(251);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(calls()).toHaveLength(250);
    expect(
      sb.state.store.findByProperty('calls', 'crmsync_call_id', 'big-7')?.properties.crmsync_score_overall,
    ).toBe('99');
    expect(counts(sb)['POST /crm/objects/2026-09/calls/batch/upsert']).toBe(3);
    expect(total(sb)).toBe(12);
  });

  it('cuts text longer than a property holds instead of failing the write', async () => {
    const long = 'x'.repeat(70_000);
    const [r] = await adapter.upsertActivities([call('long-1', sb, { hs_call_body: long })]);
    expect(r?.ok).toBe(true);
    expect(calls()[0]?.properties.hs_call_body).toHaveLength(65_536);
  });

  it('rejects a write with an unknown property as CrmRejectedError naming it, and still writes the others', async () => {
    const bad = call('bad-1', sb, { crmsync_not_a_property: 'x' });
    const results = await adapter.upsertActivities([call('good-1', sb), bad, call('good-2', sb)]);
    expect(results.map((r) => [r.key, r.ok])).toEqual([
      ['good-1', true],
      ['bad-1', false],
      ['good-2', true],
    ]);
    const err = (results[1] as { error: Error }).error;
    expect(err).toBeInstanceOf(CrmRejectedError);
    expect((err as CrmRejectedError).fields).toEqual(['crmsync_not_a_property']);
    expect((err as CrmRejectedError).retryable).toBe(false);
    expect(
      calls()
        .map((c) => c.properties.crmsync_call_id)
        .sort(),
    ).toEqual(['good-1', 'good-2']);
  });

  it('reports a per-record failure (a value of the wrong type) for that call only', async () => {
    const results = await adapter.upsertActivities([
      call('ok-1', sb),
      call('nan-1', sb, { crmsync_score_overall: 'high' }),
    ]);
    expect(results[0]?.ok).toBe(true);
    expect(results[1]).toMatchObject({ key: 'nan-1', ok: false });
    expect((results[1] as { error: Error }).error).toBeInstanceOf(CrmRejectedError);
  });

  it('writes follow-up notes exactly once, linked to contact, company and deal', async () => {
    const note: FollowupWrite = {
      callId: 'call-1',
      draftId: 'draft-1',
      key: 'draft-1',
      kind: 'note',
      properties: { hs_note_body: '<p>Send the pricing sheet</p>' },
      links: {
        contactId: sb.state.refs.contacts.jane,
        companyId: sb.state.refs.companies.acme,
        dealId: sb.state.refs.deals.acmeAddon,
      },
    };
    const first = await adapter.upsertFollowups([note]);
    const again = await adapter.upsertFollowups([
      note,
      { ...note, properties: { hs_note_body: '<p>Edited</p>' } },
    ]);
    expect(first[0]).toMatchObject({ ok: true, created: true });
    expect(again.map((r) => r.ok && r.created)).toEqual([false, false]);
    const notes = [...sb.state.store.objects.notes.values()];
    expect(notes).toHaveLength(1);
    expect(notes[0]?.properties).toMatchObject({
      crmsync_followup_id: 'draft-1',
      hs_note_body: '<p>Edited</p>',
    });
    expect(notes[0]?.properties.hs_timestamp).toBeTruthy();
    const { contacts, companies, deals } = sb.state.refs;
    expect(linksOf('notes', notes[0]!.id)).toEqual(
      [
        `contacts:${contacts.jane}:202`,
        `companies:${companies.acme}:190`,
        `deals:${deals.acmeAddon}:214`,
      ].sort(),
    );
  });

  it('writes a task follow-up as a HubSpot task', async () => {
    const [r] = await adapter.upsertFollowups([
      {
        callId: 'call-2',
        draftId: 'draft-task-1',
        key: 'draft-task-1',
        kind: 'task',
        properties: { hs_task_subject: 'Call back', hs_task_status: 'NOT_STARTED' },
        links: { contactId: sb.state.refs.contacts.dana },
      },
    ]);
    expect(r).toMatchObject({ ok: true, created: true });
    const tasks = [...sb.state.store.objects.tasks.values()];
    expect(tasks.map((t) => t.properties.hs_task_subject)).toEqual(['Call back']);
    expect(linksOf('tasks', tasks[0]!.id)).toEqual([`contacts:${sb.state.refs.contacts.dana}:204`]);
    expect(sb.state.store.objects.notes.size).toBe(0);
  });

  it('reports a link to a record that does not exist as a rejected write', async () => {
    const w = call('orphan-1', sb);
    w.links = { contactId: '999999' };
    const [r] = await adapter.upsertActivities([w]);
    expect(r).toMatchObject({ key: 'orphan-1', ok: false });
    expect((r as { error: Error }).error).toBeInstanceOf(CrmRejectedError);
    expect((r as { error: Error }).error.message).toContain('999999');
  });
});
