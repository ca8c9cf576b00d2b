/**
 * runRematch against the real HubSpot adapter and sandbox and a real database: calls move (one
 * already moved in the CRM by a run that died), one is unchanged, and two fail with their reasons
 * without stopping the others.
 */
import { formatRematch } from '../../src/cli/rematchFormat.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHubSpotAdapter } from '../../src/crm/hubspot/index.js';
import type { CrmAdapter, CrmLookup } from '../../src/crm/types.js';
import {
  buildActivity,
  buildFollowups,
  dealRuleFor,
  linksOf,
  loadMappings,
  lookupFieldsFor,
} from '../../src/mapping/index.js';
import type { Mapping } from '../../src/mapping/types.js';
import { runRematch, type RematchProgress } from '../../src/pipelines/rematch.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import type { Db } from '../../src/store/database.js';
import { getDealLedger, recordDealCall } from '../../src/store/dealSignalRepo.js';
import { syncHistory } from '../../src/store/syncEventRepo.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { getSyncStatus } from '../../src/store/syncStatus/queries.js';
import { transitionSyncStatus } from '../../src/store/syncStatus/transitions.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { CONFIG_DIR } from '../cli/helpers.js';
import { useMigratedDatabase } from '../store/helpers.js';

const T0 = new Date('2026-03-02T10:00:00.000Z');
let hs: HubSpotSandbox;
let crm: CrmAdapter;
let mapping: Mapping;

beforeAll(async () => {
  hs = await startHubSpotSandbox();
  crm = createHubSpotAdapter({ config: { baseUrl: hs.url, accessToken: hs.accessToken } });
  mapping = loadMappings(CONFIG_DIR, 'hubspot');
});
afterAll(() => hs.close());

/** Writes the call's activity as the write-back does and records it written with the lookup's ids. */
async function written(db: Db, callId: string, email: string, lookup?: CrmLookup, activityId?: string) {
  const found = lookup ?? (await crm.lookup({ email }, lookupFieldsFor(mapping), dealRuleFor(mapping)));
  const call = { id: callId, created_at: T0.toISOString(), participant: { email } };
  const [r] = await crm.upsertActivities([
    await buildActivity(mapping, { call, analysis: null, followups: [], lookup: found }),
  ]);
  if (!r?.ok) throw new Error('not written');
  await upsertDiscovered(db, {
    callId,
    crm: 'hubspot',
    call: { createdAt: T0, participantEmail: email },
    now: T0,
  });
  for (const to of ['context_pushed', 'awaiting_analysis', 'writing_back'] as const) {
    await transitionSyncStatus(db, { callId, crm: 'hubspot', to, now: T0 });
  }
  const links = linksOf(found);
  await transitionSyncStatus(db, {
    callId,
    crm: 'hubspot',
    to: 'written_back',
    now: T0,
    set: {
      writtenBackAt: T0,
      crmActivityId: activityId ?? r.id,
      crmContactId: links.contactId ?? null,
      crmCompanyId: links.companyId ?? null,
      crmDealId: links.dealId ?? null,
      matchDecision: found.decision,
    },
  });
}

describe('runRematch', () => {
  const get = useMigratedDatabase('embedded');

  it('moves what changed, counts what did not, and reports each failure without stopping', async () => {
    const db = get().db.prisma;
    const { deals } = hs.state.refs;
    await written(db, 'jane-call', 'jane.doe@acme.example');
    await written(db, 'jane-again', 'jane.doe@acme.example');
    await written(db, 'walt-call', 'walt@wayne.example');
    // Its engagement is gone from the CRM (the id names nothing).
    await written(db, 'lost-call', 'bob.smith@acme.example', undefined, '999999');
    // Matched to Acme once; nobody at gmail.com matches anything now.
    const acme = await crm.lookup(
      { email: 'bob.smith@acme.example' },
      lookupFieldsFor(mapping),
      dealRuleFor(mapping),
    );
    await written(db, 'gone-call', 'sam@gmail.com', acme);

    // Its deal signals were recorded on the deal it was written on (src/pipelines/dealSignals.ts).
    const facts = { startedAt: T0.getTime(), overallScore: 70, objectionsDetected: 0, objectionsHandled: 0 };
    await recordDealCall(db, {
      crm: 'hubspot',
      dealId: deals.acmeAddon!,
      facts: { callId: 'jane-call', ...facts, nextSteps: [] },
      now: T0,
    });
    const largest: Mapping = { ...mapping, dealRule: { orderBy: 'amount_desc', limit: 3 } };
    // A run that moved this call in the CRM, then died before recording it.
    const again = (await getSyncStatus(db, 'jane-again', 'hubspot'))!;
    const [crashed] = await crm.moveActivityLinks([
      {
        callId: 'jane-again',
        activityId: again.crmActivityId!,
        from: { contactId: again.crmContactId!, companyId: again.crmCompanyId!, dealId: again.crmDealId! },
        to: { contactId: again.crmContactId!, companyId: again.crmCompanyId!, dealId: deals.acmeExpansion },
      },
    ]);
    expect(crashed).toMatchObject({ ok: true, writes: 2 });
    const clock = new FakeClock(T0.getTime() + 3_600_000);
    const progress: RematchProgress[] = [];
    const deps = { db, crmName: 'hubspot' as const, crm, mapping: largest, clock };
    const summary = await runRematch(deps, {
      since: new Date('2026-03-01T00:00:00Z'),
      pageSize: 3,
      onProgress: (p) => progress.push(p),
    });
    expect(summary).toMatchObject({ seen: 5, moved: 2, unchanged: 1, failed: 2, dryRun: false });
    expect(progress.at(-1)).toEqual({ seen: 5, moved: 2, unchanged: 1, failed: 2 });
    expect(progress).toHaveLength(2); // pages of 3
    const byCall = new Map(summary.calls.map((c) => [c.callId, c]));
    expect(byCall.get('jane-call')).toMatchObject({
      outcome: 'moved',
      change: `deal Acme - Add-on [${deals.acmeAddon}] → Acme - Expansion [${deals.acmeExpansion}]`,
      detail: '2 CRM write(s)',
    });
    // Its record catches up; the CRM is not written twice.
    expect(byCall.get('jane-again')).toMatchObject({
      outcome: 'moved',
      detail: 'the CRM already showed the new links',
    });
    expect(await getSyncStatus(db, 'jane-again', 'hubspot')).toMatchObject({
      crmDealId: deals.acmeExpansion,
    });
    expect(byCall.get('lost-call')).toMatchObject({
      outcome: 'failed',
      detail: expect.stringMatching(/999999/),
    });
    expect(byCall.get('gone-call')).toMatchObject({
      outcome: 'failed',
      detail: 'no CRM record matches it now; its links are kept',
    });
    expect(await getSyncStatus(db, 'jane-call', 'hubspot')).toMatchObject({
      crmDealId: deals.acmeExpansion,
      updatedAt: new Date(clock.now()),
    });
    // Its deal signals moved with it: the new deal is due a write (and the old one, left empty).
    expect(
      await db.dealCall.findUnique({ where: { crm_callId: { crm: 'hubspot', callId: 'jane-call' } } }),
    ).toMatchObject({
      dealId: deals.acmeExpansion,
    });
    expect(await getDealLedger(db, 'hubspot', deals.acmeExpansion!)).toMatchObject({
      newestCallId: 'jane-call',
      writtenCallId: null,
    });
    // A failed call keeps its record as it was, and its history has no rematch line.
    expect(await getSyncStatus(db, 'gone-call', 'hubspot')).toMatchObject({ crmCompanyId: acme.company!.id });
    expect((await syncHistory(db, 'gone-call')).some((e) => e.detail?.startsWith('rematch'))).toBe(false);

    const second = await runRematch(deps, { since: new Date('2026-03-01T00:00:00Z') });
    expect(second).toMatchObject({ moved: 0, unchanged: 3, failed: 2 });
  });
  // Issue 22, defect 8: the drafts were linked where the activity was; they move with it.
  it("moves the call's follow-up drafts with its activity", async () => {
    const db = get().db.prisma;
    const { deals } = hs.state.refs;
    const email = 'jane.doe@acme.example';
    await written(db, 'jane-drafts', email);
    const lookup = await crm.lookup({ email }, lookupFieldsFor(mapping), dealRuleFor(mapping));
    const call = { id: 'jane-drafts', created_at: T0.toISOString(), participant: { email } };
    const followups = [
      { id: 'fu-1', subject: 'Thanks', body: 'Hi', to: [] },
      { id: 'fu-2', subject: 'Pricing', body: 'As discussed', to: [] },
    ];
    const notes = await crm.upsertFollowups(
      await buildFollowups(mapping, { call, analysis: null, followups, lookup }),
    );
    const noteIds = notes.map((n) => (n.ok ? n.id : ''));
    await db.syncStatus.update({
      where: { callId_crm: { callId: 'jane-drafts', crm: 'hubspot' } },
      data: { crmFollowupIds: noteIds },
    });
    const dealsOf = (type: string, id: string) =>
      hs.state.store.associations
        .filter((a) => a.fromType === type && a.fromId === id && a.toType === 'deals')
        .map((a) => a.toId);
    expect(noteIds.map((id) => dealsOf('notes', id))).toEqual([[deals.acmeAddon], [deals.acmeAddon]]);

    const largest: Mapping = { ...mapping, dealRule: { orderBy: 'amount_desc', limit: 3 } };
    const deps = {
      db,
      crmName: 'hubspot' as const,
      crm,
      mapping: largest,
      clock: new FakeClock(T0.getTime()),
    };
    const summary = await runRematch(deps, { since: new Date('2026-03-01T00:00:00Z') });
    expect(summary.calls.find((c) => c.callId === 'jane-drafts')).toMatchObject({
      outcome: 'moved',
      detail: '6 CRM write(s)', // a link made and one archived, for the activity and each draft
    });
    const activityId = (await getSyncStatus(db, 'jane-drafts', 'hubspot'))!.crmActivityId!;
    expect(dealsOf('calls', activityId)).toEqual([deals.acmeExpansion]);
    expect(noteIds.map((id) => dealsOf('notes', id))).toEqual([[deals.acmeExpansion], [deals.acmeExpansion]]);
  });

  it('stops at a CRM-wide refusal (credentials) instead of failing every page the same way', async () => {
    const db = get().db.prisma;
    await written(db, 'auth-1', 'walt@wayne.example');
    await written(db, 'auth-2', 'walt@wayne.example');
    const refused = createHubSpotAdapter({
      config: { baseUrl: hs.url, accessToken: 'not-a-valid-token' },
      retry: { maxAttempts: 1 },
    });
    const summary = await runRematch(
      { db, crmName: 'hubspot', crm: refused, mapping, clock: new FakeClock(T0.getTime()) },
      { since: new Date('2026-03-01T00:00:00Z'), pageSize: 1 },
    );
    // Said once, as the reason: the call was not checked, so it is neither seen nor failed.
    expect(summary).toMatchObject({
      seen: 0,
      moved: 0,
      failed: 0,
      calls: [],
      stoppedBy:
        'HubSpot rejected the credentials; fix the HUBSPOT_* settings ("crm-sync doctor" checks them)',
    });
    expect(formatRematch(summary)).toContain('Stopped early: HubSpot rejected the credentials;');
  });
});
