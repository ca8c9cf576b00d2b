/**
 * The write-back's check of the CRM (README, "The CRM is the ledger of last resort"), on a real
 * database and the real HubSpot adapter against its sandbox: which calls are checked, what is
 * adopted, and what happens when the CRM cannot be asked.
 */
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CrmAdapter } from '../../src/crm/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { loadMappings } from '../../src/mapping/index.js';
import { adoptAll, readLedger, type LedgerDeps } from '../../src/pipelines/crmLedger.js';
import { createLookupCache } from '../../src/pipelines/lookupCache.js';
import type { Call } from '../../src/service/types.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { claimFollowupGeneration } from '../../src/store/followupClaims.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { getSyncStatus, getSyncStatuses } from '../../src/store/syncStatus/queries.js';
import { transitionSyncStatus } from '../../src/store/syncStatus/transitions.js';
import { holdsEverything } from '../../src/pipelines/crmLedger.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { adapterFor } from '../crm-hubspot/helpers.js';
import { useMigratedDatabase } from '../store/helpers.js';

const T0 = Date.UTC(2026, 0, 5, 12);
const mapping = loadMappings(path.join(import.meta.dirname, '..', '..', 'config'), 'hubspot');

let hs: HubSpotSandbox;
let crm: CrmAdapter;
beforeAll(async () => {
  hs = await startHubSpotSandbox();
  crm = adapterFor(hs, { retry: { baseDelayMs: 1, maxAttempts: 1 } });
  // Written earlier by another worker: calls "old" and "old2" with two drafts, call "bare"
  // without drafts; none of them linked (a write that stopped before its association batch).
  await crm.upsertActivities(
    ['old', 'old2', 'bare'].map((callId) => ({
      callId,
      properties: { crmsync_call_id: callId, hs_timestamp: '2026-01-05T10:00:00.000Z' },
      links: {},
    })),
  );
  await crm.upsertFollowups(
    ['old', 'old2'].flatMap((callId) =>
      ['d1', 'd2'].map((draftId) => ({
        callId,
        draftId,
        key: `${callId}:${draftId}`,
        kind: 'note' as const,
        properties: {
          crmsync_followup_id: `${callId}:${draftId}`,
          crmsync_call_id: callId,
          hs_note_body: 'x',
        },
        links: {},
      })),
    ),
  );
});
afterAll(() => hs.close());

describe('the write-back asks the CRM about calls it has no record of', () => {
  const current = useMigratedDatabase('embedded');
  let deps: LedgerDeps;
  const ledgerOf = async (callIds: string[]) =>
    readLedger(deps, callIds, await getSyncStatuses(deps.db, callIds, 'hubspot'));
  beforeEach(() => {
    hs.state.requests.clear();
    const clock = new FakeClock(T0);
    deps = {
      db: current().db.prisma,
      crmName: 'hubspot',
      crm,
      mapping,
      clock,
      logger: silentLogger,
      lookups: createLookupCache({ crm, mapping, clock }),
    };
  });

  it('asks once for the batch, and not about calls whose context it pushed live', async () => {
    const now = new Date(T0);
    await upsertDiscovered(deps.db, { callId: 'live', crm: 'hubspot', now });
    await transitionSyncStatus(deps.db, {
      callId: 'live',
      crm: 'hubspot',
      to: 'context_pushed',
      now,
      set: { contextPushedAt: now },
    });
    const ledger = await ledgerOf(['old', 'bare', 'new', 'live']);
    expect(hs.state.requests.byPath()).toEqual({
      'POST /crm/objects/2026-09/calls/search': 1,
      'POST /crm/objects/2026-09/notes/search': 1,
    });
    expect(ledger.get('old')).toMatchObject({ activityId: expect.any(String), followups: [{}, {}] });
    expect(ledger.get('bare')).toMatchObject({ followups: [] });
    expect(ledger.has('new')).toBe(false);
    expect(ledger.has('live')).toBe(false);

    hs.state.requests.clear();
    expect((await ledgerOf(['live'])).size).toBe(0);
    expect(hs.state.requests.records).toHaveLength(0);
  });

  it('adopts a call whose activity and drafts are in the CRM; goes on with one that has only its activity', async () => {
    const ledger = await ledgerOf(['old', 'bare']);
    const now = new Date(T0);
    const old = (await upsertDiscovered(deps.db, { callId: 'old', crm: 'hubspot', now })).record;

    const written = ledger.get('old');
    if (!written || written instanceof Error) throw new Error('old not found');
    expect(holdsEverything(mapping, written)).toBe(true);
    const call = { id: 'old', participant: { email: 'jane.doe@acme.example' } } as Call;
    const adopted = await adoptAll(deps, [{ jobId: 1, record: old, call, written }]);
    expect(adopted.get(1)).toMatch(/found in the CRM/);
    const row = await getSyncStatus(deps.db, 'old', 'hubspot');
    expect(row).toMatchObject({ state: 'written_back', crmActivityId: written.activityId });
    expect([...row!.crmFollowupIds].sort()).toEqual(written.followups.map((f) => f.crmId).sort());
    expect(await claimFollowupGeneration(deps.db, 'old', 'hubspot', now)).toBe(false);

    // Only its activity, no drafts, no stamp: not whole, so the write-back goes on with it.
    expect(holdsEverything(mapping, ledger.get('bare'))).toBe(false);
  });

  // Issue 22, defect 6: the association batch may have failed after the upsert.
  it('re-links what it adopts to the current match, and writes nothing when the links are in place', async () => {
    const ledger = await ledgerOf(['old2']);
    const written = ledger.get('old2');
    if (!written || written instanceof Error) throw new Error('old2 not found');
    const now = new Date(T0);
    const record = (await upsertDiscovered(deps.db, { callId: 'old2', crm: 'hubspot', now })).record;
    const call = { id: 'old2', participant: { email: 'jane.doe@acme.example' } } as Call;
    const { contacts, companies } = hs.state.refs;
    const linked = (type: string, id: string) =>
      hs.state.store.associations
        .filter((a) => a.fromType === type && a.fromId === id && a.toType !== 'calls')
        .map((a) => `${a.toType}:${a.toId}`)
        .sort();
    expect(linked('calls', written.activityId!)).toEqual([]); // written, never linked

    const adopted = await adoptAll(deps, [{ jobId: 7, record, call, written }]);
    expect(adopted.get(7)).toMatch(/re-linked to the current match/);
    const jane = [`companies:${companies.acme}`, `contacts:${contacts.jane}`];
    expect(linked('calls', written.activityId!)).toEqual(expect.arrayContaining(jane));
    for (const f of written.followups) expect(linked('notes', f.crmId)).toEqual(expect.arrayContaining(jane));
    expect(await getSyncStatus(deps.db, 'old2', 'hubspot')).toMatchObject({
      state: 'written_back',
      crmContactId: contacts.jane,
      crmCompanyId: companies.acme,
    });

    // Adopted again (another fresh database, say): everything is in place, nothing is written.
    hs.state.requests.clear();
    const again = (await getSyncStatus(deps.db, 'old2', 'hubspot'))!;
    expect((await adoptAll(deps, [{ jobId: 8, record: again, call, written }])).get(8)).toMatch(
      /nothing written$/,
    );
    expect(hs.state.requests.records.filter((r) => r.path.includes('/batch/create'))).toEqual([]);
    expect(hs.state.requests.records.filter((r) => r.path.includes('/batch/archive'))).toEqual([]);
  });

  it('gives each unknown call the error when the CRM cannot be asked, so nothing is generated for it', async () => {
    await fetch(`${hs.url}/_admin/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 400, match: '/search', count: 1 }),
    });
    const ledger = await ledgerOf(['x1', 'x2']);
    expect(ledger.get('x1')).toBeInstanceOf(Error);
    expect(ledger.get('x2')).toBe(ledger.get('x1'));
  });
});
