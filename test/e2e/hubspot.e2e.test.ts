/**
 * The worker as a real process against the Service and HubSpot sandboxes: live context, one call
 * engagement per call with its scores and follow-up notes, and duplicated, shuffled webhooks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import {
  completeCall,
  createCall,
  freePort,
  post,
  removeTempDirs,
  runCli,
  startWorkerProcess,
  stopWorker,
  syncState,
  tempDataDir,
  waitFor,
  waitWrittenBack,
  workerEnv,
  type WorkerProcess,
} from './harness.js';
import { expectEmptyFieldRecordsSynced } from './emptyFields.js';
import {
  draftIds,
  expectedScores,
  followupGenerations,
  hubspotActivityCounts,
  hubspotCallEngagements,
  hubspotLinks,
  hubspotNotes,
  pushedContexts,
  noteDraftId,
} from './readback.js';

const DANA = { name: 'Dana Deals', email: 'dana@umbrella.example', company: 'Umbrella Inc' };
const JANE = { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' };
// Mixed case on the wire; HubSpot stores emails lower-case. Bob has no deal of his own.
const BOB = { name: 'Bob Smith', email: 'Bob.Smith@ACME.example', company: 'Acme Corp' };

let svc: ServiceSandbox;
let hs: HubSpotSandbox;
let worker: WorkerProcess;
let webhookUrl: string;
const allCalls: string[] = [];

beforeAll(async () => {
  const port = await freePort();
  webhookUrl = `http://127.0.0.1:${port}/webhooks`;
  [svc, hs] = await Promise.all([
    startServiceSandbox({ plan: 'enterprise', seedCalls: 0, analysisDelayMs: 50, webhookUrl }),
    startHubSpotSandbox(),
  ]);
  worker = await startWorkerProcess(
    workerEnv(svc, { kind: 'hubspot', sandbox: hs }, { PORT: String(port), DATA_DIR: tempDataDir() }),
  );
});

afterAll(async () => {
  if (worker) await stopWorker(worker).catch(() => undefined);
  await Promise.all([svc?.close(), hs?.close()]);
  removeTempDirs();
});

/** The engagement of a call, asserted to be the only one. */
function onlyEngagement(callId: string) {
  const found = hubspotCallEngagements(hs, callId);
  expect(found, `call engagements for ${callId}`).toHaveLength(1);
  return found[0]!;
}

describe('worker + HubSpot, end to end', () => {
  it('pushes live context, then writes one call engagement with scores, objections and notes on the right records', async () => {
    const { contacts, companies, deals } = hs.state.refs;
    const dana = await createCall(svc, DANA);
    const jane = await createCall(svc, JANE);
    allCalls.push(dana, jane);

    const [danaContext, janeContext] = await waitFor('both contexts to be pushed', () => {
      const d = pushedContexts(svc, dana)[0];
      const j = pushedContexts(svc, jane)[0];
      return d && j ? [d, j] : undefined;
    });
    expect(danaContext).toMatchObject({
      source: 'hubspot',
      contact: { name: 'Dana Scully', email: 'dana@umbrella.example' },
      company: { name: 'Umbrella Inc', domain: 'umbrella.example' },
      custom: { matched_by: 'email' },
    });
    // Dana's closed-lost deal is left out; the open one is named.
    expect(danaContext!.deals?.map((d) => d.id)).toEqual([deals.umbrellaSuite]);
    expect(janeContext).toMatchObject({
      contact: { name: 'Jane Doe', email: 'jane.doe@acme.example' },
      company: { name: 'Acme Corp' },
    });
    // Open deals by close date (the tie broken by last modified), three at most; no closed deal.
    expect(janeContext!.deals?.map((d) => d.id)).toEqual([
      deals.acmeAddon,
      deals.acmeRenewal,
      deals.acmeExpansion,
    ]);
    expect(await syncState(worker, dana)).toBe('context_pushed');

    await Promise.all([completeCall(svc, dana), completeCall(svc, jane)]);
    await waitWrittenBack(worker, [dana, jane]);

    const expectations = [
      { callId: dana, contact: contacts.dana, company: companies.umbrella, deal: deals.umbrellaSuite },
      { callId: jane, contact: contacts.jane, company: companies.acme, deal: deals.acmeAddon },
    ];
    for (const { callId, contact, company, deal } of expectations) {
      const engagement = onlyEngagement(callId);
      const { scoring, detected, handled } = expectedScores(svc, callId);
      expect(engagement.properties).toMatchObject({
        crmsync_score_overall: String(scoring.overall),
        crmsync_score_rapport: String(scoring.rapport),
        crmsync_score_discovery: String(scoring.discovery),
        crmsync_score_objection_handling: String(scoring.objection_handling),
        crmsync_score_closing: String(scoring.closing),
        crmsync_objections_detected: String(detected),
        crmsync_objections_handled: String(handled),
        hs_call_status: 'COMPLETED',
      });
      expect(hubspotLinks(hs, 'calls', engagement.id)).toEqual({
        contacts: [contact],
        companies: [company],
        deals: [deal],
      });

      // One generation, and each of its drafts is one note on the same contact and deal.
      expect(followupGenerations(svc, callId)).toBe(1);
      const drafts = draftIds(svc, callId);
      const notes = hubspotNotes(hs, drafts);
      expect(notes.map(noteDraftId).sort()).toEqual([...drafts].sort());
      for (const note of notes) {
        expect(String(note.properties.hs_note_body)).toContain('Follow-up draft (not sent)');
        expect(hubspotLinks(hs, 'notes', note.id)).toMatchObject({ contacts: [contact], deals: [deal] });
      }
    }

    // The operator's view: GET /status and `crm-sync status` (which asks the running worker).
    const status = await worker.status();
    expect(status.calls.written_back).toBe(2);
    const [cliAll, cliCall] = await Promise.all([
      runCli(['status', '--json'], worker.env),
      runCli(['status', '--call', dana, '--json'], worker.env),
    ]);
    expect(cliAll.code, cliAll.stderr).toBe(0);
    expect((JSON.parse(cliAll.stdout) as { calls: Record<string, number> }).calls.written_back).toBe(2);
    expect(cliCall.code, cliCall.stderr).toBe(0);
    const row = (JSON.parse(cliCall.stdout) as { status: { state: string; crmActivityId: string } }).status;
    expect(row).toMatchObject({ state: 'written_back', crmActivityId: onlyEngagement(dana).id });
  });

  it('handles duplicated, shuffled webhooks (first deliveries and replays alike) with one engagement per call', async () => {
    // Phase 1: the Service records events but cannot deliver them; the calls run their course.
    await post(`${svc.url}/_admin/config`, { webhookUrl: null });
    const calls = [await createCall(svc, BOB), await createCall(svc, DANA), await createCall(svc, JANE)];
    allCalls.push(...calls);
    for (const id of calls) await completeCall(svc, id);
    await waitFor('the Service to analyse the calls', () =>
      calls.every((id) => svc.state.getCall(id)?.status === 'analyzed'),
    );

    // Phase 2: every event so far (earlier calls' too) arrives three times, in random order.
    await post(`${svc.url}/_admin/config`, { webhookUrl });
    const eventsAtReplay = svc.state.events.length;
    const firstReplay = await post<{ replayed: number }>(`${svc.url}/_admin/webhooks/replay`, {
      duplicate: 3,
      shuffle: true,
    });
    expect(firstReplay.replayed).toBe(3 * eventsAtReplay);
    await waitWrittenBack(worker, calls);

    // The follow-up notes of the new calls land too (their followup.generated events included).
    for (const id of calls) {
      await waitFor(
        `notes of ${id}`,
        () => hubspotNotes(hs, draftIds(svc, id)).length === draftIds(svc, id).length,
      );
    }
    const expectOneOfEverything = () => {
      expect(hubspotActivityCounts(hs, allCalls)).toEqual(Object.fromEntries(allCalls.map((id) => [id, 1])));
      expect(allCalls.map((id) => followupGenerations(svc, id))).toEqual(allCalls.map(() => 1));
      const drafts = allCalls.flatMap((id) => draftIds(svc, id));
      expect(hubspotNotes(hs)).toHaveLength(drafts.length);
    };
    expectOneOfEverything();
    // Bob's activity and notes sit on Bob and his company's soonest deal.
    const bob = onlyEngagement(calls[0]!);
    expect(hubspotLinks(hs, 'calls', bob.id)).toEqual({
      contacts: [hs.state.refs.contacts.bob],
      companies: [hs.state.refs.companies.acme],
      deals: [hs.state.refs.deals.acmeAddon],
    });

    // Phase 3: everything again, once every live delivery so far has been answered. Replays of
    // known event ids must not queue any job at all.
    await waitFor('the Service to have delivered every event', () => {
      const w = svc.state.countersSnapshot().webhooks;
      return w.sent === w.delivered + w.failedAttempts;
    });
    const jobsBefore = totalJobs((await worker.status()).jobs.byState);
    const second = await post<{ replayed: number }>(`${svc.url}/_admin/webhooks/replay`, {
      duplicate: 3,
      shuffle: true,
    });
    expect(second.replayed).toBeGreaterThan(firstReplay.replayed);
    expect(totalJobs((await worker.status()).jobs.byState)).toBe(jobsBefore);
    expectOneOfEverything();
  });

  it('pushes context for records with empty fields (no first name, no website, no company) and writes them back', async () => {
    allCalls.push(...(await expectEmptyFieldRecordsSynced(svc, worker)));
  });
});

function totalJobs(byState: Record<string, number>): number {
  return Object.values(byState).reduce((a, b) => a + b, 0);
}
