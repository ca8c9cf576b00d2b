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
import { adoptWritten, readLedger, type LedgerDeps } from '../../src/pipelines/crmLedger.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '../../src/sandbox/hubspot/index.js';
import { claimFollowupGeneration } from '../../src/store/followupRepo.js';
import {
  getSyncStatus,
  getSyncStatuses,
  transitionSyncStatus,
  upsertDiscovered,
} from '../../src/store/syncStatusRepo.js';
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
  // Written earlier by another worker: call "old" with two drafts, call "bare" without drafts.
  await crm.upsertActivities(
    ['old', 'bare'].map((callId) => ({
      callId,
      properties: { crmsync_call_id: callId, hs_timestamp: '2026-01-05T10:00:00.000Z' },
      links: {},
    })),
  );
  await crm.upsertFollowups(
    ['d1', 'd2'].map((draftId) => ({
      callId: 'old',
      draftId,
      key: draftId,
      kind: 'note' as const,
      properties: { crmsync_followup_id: draftId, crmsync_call_id: 'old', hs_note_body: 'x' },
      links: {},
    })),
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
    deps = {
      db: current().db.prisma,
      crmName: 'hubspot',
      crm,
      mapping,
      clock: new FakeClock(T0),
      logger: silentLogger,
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
      'POST /crm/v3/objects/calls/search': 1,
      'POST /crm/v3/objects/notes/search': 1,
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
    const bare = (await upsertDiscovered(deps.db, { callId: 'bare', crm: 'hubspot', now })).record;

    const written = ledger.get('old');
    if (!written || written instanceof Error) throw new Error('old not found');
    expect(await adoptWritten(deps, old, written)).toMatch(/found in the CRM/);
    const row = await getSyncStatus(deps.db, 'old', 'hubspot');
    expect(row).toMatchObject({ state: 'written_back', crmActivityId: written.activityId });
    expect([...row!.crmFollowupIds].sort()).toEqual(written.followups.map((f) => f.crmId).sort());
    expect(await claimFollowupGeneration(deps.db, 'old', 'hubspot', now)).toBe(false);

    const onlyActivity = ledger.get('bare');
    if (!onlyActivity || onlyActivity instanceof Error) throw new Error('bare not found');
    expect(await adoptWritten(deps, bare, onlyActivity)).toBeUndefined();
    expect((await getSyncStatus(deps.db, 'bare', 'hubspot'))?.state).toBe('discovered');
    expect(await claimFollowupGeneration(deps.db, 'bare', 'hubspot', now)).toBe(true);
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
