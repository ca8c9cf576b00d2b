/**
 * `crm-sync rematch` end to end, on both CRM sandboxes: the worker (a real process) writes calls,
 * the admin changes the mapping's deal rule, and `crm-sync rematch` (a real process) moves each
 * activity to the deal the new rule chooses, unlinks the old one and records the move in the
 * call's history. A second run finds nothing to move and sends the CRM reads only.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import {
  completeCall,
  createCall,
  freePort,
  REPO_ROOT,
  removeTempDirs,
  runCli,
  startWorkerProcess,
  stopWorker,
  tempDataDir,
  waitWrittenBack,
  workerEnv,
  type Person,
  type WorkerEnv,
} from './harness.js';
import {
  draftIds,
  hubspotCallEngagements,
  hubspotLinks,
  hubspotNotes,
  salesforceId,
  salesforceTasks,
} from './readback.js';

const JANE = { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' };
// Bob has no deal of his own: his call goes on the company's first deal by the rule.
const BOB = { name: 'Bob Smith', email: 'bob.smith@acme.example', company: 'Acme Corp' };
const SINCE = '2020-01-01';
/** Each step starts a process on the embedded database: generous on a loaded machine. */
const SLOW_MS = 90_000;

const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await Promise.all(closers.map((c) => c().catch(() => undefined)));
  removeTempDirs();
});

type Crm = { kind: 'hubspot'; sandbox: HubSpotSandbox } | { kind: 'salesforce'; sandbox: SalesforceSandbox };

/** A worker on a copy of the shipped config writes the calls, then stops; returns the CLI's settings. */
async function writeCalls(
  crm: Crm,
  people: Person[],
): Promise<{ env: WorkerEnv; callIds: string[]; configDir: string; svc: ServiceSandbox }> {
  const port = await freePort();
  const svc: ServiceSandbox = await startServiceSandbox({
    plan: 'enterprise',
    seedCalls: 0,
    analysisDelayMs: 50,
    webhookUrl: `http://127.0.0.1:${port}/webhooks`,
  });
  closers.push(() => svc.close());
  const configDir = tempDataDir();
  cpSync(path.join(REPO_ROOT, 'config'), configDir, { recursive: true });
  const env = workerEnv(svc, crm, { PORT: String(port), DATA_DIR: tempDataDir(), CONFIG_DIR: configDir });
  const worker = await startWorkerProcess(env, SLOW_MS);
  try {
    const callIds: string[] = [];
    for (const p of people) callIds.push(await createCall(svc, p));
    await Promise.all(callIds.map((id) => completeCall(svc, id)));
    await waitWrittenBack(worker, callIds, SLOW_MS);
    return { env, callIds, configDir, svc };
  } finally {
    await stopWorker(worker);
  }
}

/** The admin's rule change: the largest open deal instead of the soonest to close. */
function chooseLargestDeal(configDir: string, crm: Crm['kind']): void {
  const file = path.join(configDir, 'mappings', `${crm}.yaml`);
  const text = readFileSync(file, 'utf8');
  expect(text).toContain('order_by: close_date_asc');
  writeFileSync(file, text.replace('order_by: close_date_asc', 'order_by: amount_desc'));
}

async function callView(env: WorkerEnv, callId: string) {
  const { code, stdout, stderr } = await runCli(['status', '--call', callId, '--json'], env, {
    timeoutMs: SLOW_MS,
  });
  expect({ code, stderr }).toMatchObject({ code: 0 });
  return JSON.parse(stdout) as {
    status: { crmDealId: string; matchDecision: { deal: { id: string; rule: string } } };
    history: { fromState: string; toState: string; detail: string }[];
  };
}

async function rematch(env: WorkerEnv, ...extra: string[]) {
  const out = await runCli(['rematch', '--since', SINCE, ...extra], env, { timeoutMs: SLOW_MS });
  expect(out.code, out.stdout + out.stderr).toBe(0);
  return out.stdout;
}

describe('rematch on HubSpot', () => {
  it('moves the call engagement to the deal a changed rule chooses, once', async () => {
    const hs = await startHubSpotSandbox();
    closers.push(() => hs.close());
    const crm: Crm = { kind: 'hubspot', sandbox: hs };
    const { deals, contacts, companies } = hs.state.refs;
    const { env, callIds, configDir, svc } = await writeCalls(crm, [JANE, BOB]);
    const [jane, bob] = callIds as [string, string];
    const engagement = (callId: string) => hubspotCallEngagements(hs, callId)[0]!.id;
    // Soonest close date: the add-on (tied with the renewal, modified later).
    expect(hubspotLinks(hs, 'calls', engagement(jane)).deals).toEqual([deals.acmeAddon]);
    expect(hubspotLinks(hs, 'calls', engagement(bob)).deals).toEqual([deals.acmeAddon]);

    chooseLargestDeal(configDir, 'hubspot');
    // A run that died after linking Bob's call to the new deal, before unlinking the old one.
    hs.state.store.associate('calls', engagement(bob), 'deals', deals.acmeExpansion!, 206, 205);

    // --dry-run says what would move and writes nothing.
    const serviceRequests = svc.state.countersSnapshot().requests;
    hs.state.requests.clear();
    const dry = await rematch(env, '--dry-run');
    expect(dry).toContain('would move');
    expect(dry).toContain(
      `deal Acme - Add-on [${deals.acmeAddon}] → Acme - Expansion [${deals.acmeExpansion}]`,
    );
    expect(hubspotWrites(hs)).toEqual([]);
    expect(hubspotLinks(hs, 'calls', engagement(jane)).deals).toEqual([deals.acmeAddon]);

    const first = await rematch(env);
    expect(first).toMatch(/moved\s+2/);
    for (const id of [jane, bob]) {
      expect(hubspotLinks(hs, 'calls', engagement(id)).deals).toEqual([deals.acmeExpansion]);
      expect(hubspotLinks(hs, 'calls', engagement(id)).companies).toEqual([companies.acme]);
    }
    expect(hubspotLinks(hs, 'calls', engagement(jane)).contacts).toEqual([contacts.jane]);
    // Bob's half-done move only needed its old link archived; Jane's needed a create and an archive.
    // Their follow-up notes moved with them (issue 22, defect 8).
    expect(hubspotWrites(hs)).toEqual([
      'POST /crm/associations/2026-09/calls/deals/batch/create',
      'POST /crm/associations/2026-09/calls/deals/batch/archive',
      'POST /crm/associations/2026-09/notes/deals/batch/create',
      'POST /crm/associations/2026-09/notes/deals/batch/archive',
    ]);
    for (const id of [jane, bob]) {
      for (const note of hubspotNotes(hs, draftIds(svc, id))) {
        expect(hubspotLinks(hs, 'notes', note.id).deals).toEqual([deals.acmeExpansion]);
      }
    }

    const view = await callView(env, jane);
    expect(view.status.crmDealId).toBe(deals.acmeExpansion);
    expect(view.status.matchDecision.deal.id).toBe(deals.acmeExpansion);
    expect(view.history.at(-1)).toMatchObject({
      fromState: 'written_back',
      toState: 'written_back',
      detail: `rematch: deal Acme - Add-on [${deals.acmeAddon}] → Acme - Expansion [${deals.acmeExpansion}]`,
    });

    // Twice: nothing moves, and the CRM sees reads only.
    hs.state.requests.clear();
    const second = await rematch(env);
    expect(second).toMatch(/moved\s+0/);
    expect(second).toMatch(/unchanged\s+2/);
    expect(hs.state.requests.records.length).toBeGreaterThan(0);
    expect(hubspotWrites(hs)).toEqual([]);
    // Rematch reads the participants the store kept: the Service saw none of it.
    expect(svc.state.countersSnapshot().requests).toBe(serviceRequests);
    expect((await callView(env, jane)).history.filter((h) => h.detail?.startsWith('rematch:'))).toHaveLength(
      1,
    );
  }, 600_000);
});

describe('rematch on Salesforce', () => {
  it("moves the call Task's WhatId to the opportunity a changed rule chooses, once", async () => {
    const sf = await startSalesforceSandbox();
    closers.push(() => sf.close());
    const crm: Crm = { kind: 'salesforce', sandbox: sf };
    const opp = (name: string) => salesforceId(sf, 'Opportunity', (o) => o.Name === name);
    const janeId = salesforceId(sf, 'Contact', (c) => c.Email === 'jane.doe@acme.example');
    const { env, callIds, configDir } = await writeCalls(crm, [JANE]);
    const [jane] = callIds as [string];
    const task = () => salesforceTasks(sf, jane)[0]!;
    expect(task()).toMatchObject({ WhoId: janeId, WhatId: opp('Acme - Pilot') });

    chooseLargestDeal(configDir, 'salesforce');
    const before = sf.state.requestCounts();
    const dry = await rematch(env, '--dry-run');
    expect(dry).toContain(
      `deal Acme - Pilot [${opp('Acme - Pilot')}] → Acme - Expansion [${opp('Acme - Expansion')}]`,
    );
    expect(salesforceWrites(sf, before)).toEqual([]);

    const first = await rematch(env);
    expect(first).toMatch(/moved\s+1/);
    expect(task()).toMatchObject({ WhoId: janeId, WhatId: opp('Acme - Expansion') });
    const view = await callView(env, jane);
    expect(view.status.crmDealId).toBe(opp('Acme - Expansion'));
    expect(view.history.at(-1)?.detail).toBe(
      `rematch: deal Acme - Pilot [${opp('Acme - Pilot')}] → Acme - Expansion [${opp('Acme - Expansion')}]`,
    );

    const again = sf.state.requestCounts();
    const second = await rematch(env);
    expect(second).toMatch(/unchanged\s+1/);
    expect(salesforceWrites(sf, again)).toEqual([]);
    expect(Object.values(diff(sf.state.requestCounts(), again)).reduce((a, b) => a + b, 0)).toBeGreaterThan(
      0,
    );
  }, 600_000);
});

/** HubSpot requests that change something: not GETs, searches or batch reads. */
function hubspotWrites(hs: HubSpotSandbox): string[] {
  return hs.state.requests.records
    .filter((r) => r.method !== 'GET' && !/\/(search|batch\/read)$/.test(r.path))
    .map((r) => `${r.method} ${r.path}`);
}

function diff(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after)
      .map(([k, n]) => [k, n - (before[k] ?? 0)] as const)
      .filter(([, n]) => n > 0),
  );
}

/** Salesforce requests since `before` that change something (anything but GET). */
function salesforceWrites(sf: SalesforceSandbox, before: Record<string, number>): string[] {
  return Object.keys(diff(sf.state.requestCounts(), before)).filter((k) => !k.startsWith('GET '));
}
