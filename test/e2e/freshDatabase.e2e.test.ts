/**
 * The CRM as the ledger of last resort (README, "Follow-ups at most once"): worker A writes calls;
 * worker B, on a fresh database against the same Service and CRM, finds them in its first-run
 * look-back. B asks the Service for no follow-ups, writes no note, draft or second activity, and
 * its own sync rows take the CRM ids it found.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import {
  completeCall,
  createCall,
  freePort,
  removeTempDirs,
  startWorkerProcess,
  stopWorker,
  tempDataDir,
  waitWrittenBack,
  workerEnv,
  type Person,
  type WorkerProcess,
} from './harness.js';
import {
  draftIds,
  followupGenerations,
  hubspotCallEngagements,
  hubspotNotes,
  salesforceEmails,
  salesforceTasks,
} from './readback.js';

const HUBSPOT_PEOPLE: Person[] = [
  { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' },
  { name: 'Dana Deals', email: 'dana@umbrella.example', company: 'Umbrella Inc' },
  { name: 'Bob Smith', email: 'bob.smith@acme.example', company: 'Acme Corp' },
];
const SALESFORCE_PEOPLE: Person[] = [
  { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' },
  { name: 'Dana Scully', email: 'dana@umbrella.example', company: 'Umbrella Inc' },
  { name: 'Lena Lead', email: 'lena.lead@globex.example', company: 'Globex' },
];

const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await Promise.all(closers.map((close) => close().catch(() => undefined)));
  removeTempDirs();
});

/** POST /v1/calls/:id/followups requests the Service sandbox accepted so far. */
function followupPosts(svc: ServiceSandbox): number {
  const counts = svc.state.countersSnapshot().byEndpoint;
  return Object.entries(counts)
    .filter(([endpoint]) => endpoint.startsWith('POST ') && endpoint.endsWith('/followups'))
    .reduce((n, [, c]) => n + c, 0);
}

interface CrmView {
  /** Per call id: its activities' CRM ids and its drafts' CRM ids, as the CRM holds them. */
  records(svc: ServiceSandbox, callId: string): { activities: string[]; drafts: string[] };
  /** All activities and drafts in the CRM. */
  totals(): { activities: number; drafts: number };
}

interface AdminCall {
  status: { state: string; crmActivityId: string | null; crmFollowupIds: string[] };
}

/** Worker A writes `people`' calls; then worker B, on a fresh database, looks back over them. */
async function twoWorkers(
  svc: ServiceSandbox,
  crm: Parameters<typeof workerEnv>[1],
  people: Person[],
  view: CrmView,
): Promise<void> {
  const port = String(await freePort());
  const envFor = () => workerEnv(svc, crm, { PORT: port, DATA_DIR: tempDataDir() });
  svc.state.settings.webhookUrl = `http://127.0.0.1:${port}/webhooks`;

  let worker: WorkerProcess = await startWorkerProcess(envFor(), 120_000);
  closers.push(() => stopWorker(worker));
  const calls: string[] = [];
  for (const person of people) calls.push(await createCall(svc, person));
  await Promise.all(calls.map((id) => completeCall(svc, id)));
  await waitWrittenBack(worker, calls, 90_000);
  await stopWorker(worker);

  const before = Object.fromEntries(calls.map((id) => [id, view.records(svc, id)]));
  const totals = view.totals();
  const posts = followupPosts(svc);
  for (const id of calls) {
    expect(followupGenerations(svc, id)).toBe(1);
    expect(before[id]!.activities).toHaveLength(1);
    expect(before[id]!.drafts.length).toBe(draftIds(svc, id).length);
    expect(before[id]!.drafts.length).toBeGreaterThan(0);
  }

  // Worker B: a new database; its start-up poll looks back 24 hours and finds A's calls.
  worker = await startWorkerProcess(envFor(), 120_000);
  await waitWrittenBack(worker, calls, 90_000);

  expect(followupPosts(svc) - posts).toBe(0);
  expect(view.totals()).toEqual(totals);
  for (const id of calls) {
    expect(view.records(svc, id)).toEqual(before[id]);
    const row = await worker.get<AdminCall>(`/admin/calls/${encodeURIComponent(id)}`);
    expect(row.status.crmActivityId).toBe(before[id]!.activities[0]);
    expect([...row.status.crmFollowupIds].sort()).toEqual([...before[id]!.drafts].sort());
  }
  await stopWorker(worker);
}

describe('a second worker on a fresh database', () => {
  it('HubSpot: generates no follow-ups, writes no note and leaves one call engagement per call', async () => {
    const [svc, hs]: [ServiceSandbox, HubSpotSandbox] = await Promise.all([
      startServiceSandbox({ plan: 'enterprise', seedCalls: 0, analysisDelayMs: 50 }),
      startHubSpotSandbox(),
    ]);
    closers.push(
      () => svc.close(),
      () => hs.close(),
    );
    await twoWorkers(svc, { kind: 'hubspot', sandbox: hs }, HUBSPOT_PEOPLE, {
      records: (s, id) => ({
        activities: hubspotCallEngagements(hs, id).map((o) => o.id),
        drafts: hubspotNotes(hs, draftIds(s, id)).map((o) => o.id),
      }),
      totals: () => ({ activities: hubspotCallEngagements(hs).length, drafts: hubspotNotes(hs).length }),
    });
  }, 400_000);

  it('Salesforce: generates no follow-ups, writes no draft EmailMessage and leaves one call Task per call', async () => {
    const [svc, sf]: [ServiceSandbox, SalesforceSandbox] = await Promise.all([
      startServiceSandbox({ plan: 'enterprise', seedCalls: 0, analysisDelayMs: 50 }),
      startSalesforceSandbox(),
    ]);
    closers.push(
      () => svc.close(),
      () => sf.close(),
    );
    await twoWorkers(svc, { kind: 'salesforce', sandbox: sf }, SALESFORCE_PEOPLE, {
      records: (s, id) => ({
        activities: salesforceTasks(sf, id).map((t) => t.Id),
        drafts: salesforceEmails(sf, draftIds(s, id)).map((e) => e.Id),
      }),
      totals: () => ({
        activities: sf.state.store.all('Task').filter((t) => t.CrmSync_Call_Id__c).length,
        drafts: sf.state.store.all('EmailMessage').length,
      }),
    });
  }, 400_000);
});
