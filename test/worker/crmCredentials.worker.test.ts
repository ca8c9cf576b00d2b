/**
 * Rejected CRM credentials through the real worker, against the HubSpot sandbox (which revokes
 * and restores its token) and the Service sandbox, on a fake clock: /readyz, /status and the gauge
 * say which credential and what to do; held jobs run within a minute of the token working again,
 * without a restart, and at once after a restart with working credentials.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { FakeClock } from '../../src/util/fakeClock.js';
import type { StatusSnapshot } from '../../src/ops/status.js';
import {
  adminPost,
  ROOMY_LIMITS,
  startInProcessWorker,
  tickUntil,
  type InProcessWorker,
} from './inProcess.js';

const JANE = { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' };
const REASON =
  'HubSpot access token rejected (401): rotate or create a HubSpot Service Key (docs/install.md, section 1) and set HUBSPOT_ACCESS_TOKEN';

let svc: ServiceSandbox | undefined;
let hs: HubSpotSandbox | undefined;
let workers: InProcessWorker[] = [];

afterEach(async () => {
  for (const w of workers) await w.close().catch(() => undefined);
  workers = [];
  await Promise.all([svc?.close(), hs?.close()]);
});

async function setup(clock: FakeClock): Promise<{ svc: ServiceSandbox; hs: HubSpotSandbox }> {
  svc = await startServiceSandbox({ clock, seedCalls: 0, limits: ROOMY_LIMITS });
  hs = await startHubSpotSandbox({ clock, limits: { perWindow: 10_000 } });
  // A live call the worker finds at start; its context job needs the CRM.
  await adminPost(`${svc.url}/_admin/calls`, { id: 'call_live', participant: JANE });
  await adminPost(`${hs.url}/_admin/tokens/revoke`);
  return { svc, hs };
}

async function start(clock: FakeClock, over: Record<string, string> = {}): Promise<InProcessWorker> {
  const worker = await startInProcessWorker(clock, svc!, hs!, over);
  workers.push(worker);
  return worker;
}

async function heldOnCrmAuth(clock: FakeClock, worker: InProcessWorker): Promise<void> {
  await tickUntil(
    clock,
    'the context job to be held back on CRM_AUTH',
    async () => (await worker.call('call_live'))?.lastErrorCode === 'CRM_AUTH',
  );
}

describe('rejected CRM credentials', { timeout: 180_000 }, () => {
  it('fail /readyz, say which credential and what to do, and recover within a minute without a restart', async () => {
    const clock = new FakeClock();
    await setup(clock);
    const worker = await start(clock);
    await heldOnCrmAuth(clock, worker);

    const ready = await worker.get<{
      ready: boolean;
      checks: Record<string, { ok: boolean; detail?: string }>;
    }>('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.checks.crm).toEqual({ ok: false, detail: REASON });
    expect(JSON.stringify(ready.body)).not.toContain(hs!.accessToken);
    expect(await worker.call('call_live')).toMatchObject({ state: 'discovered', lastErrorMessage: REASON });
    const status = (await worker.get<StatusSnapshot>('/status')).body;
    expect(status.worker?.crmCredentials).toMatchObject({ accepted: false, detail: REASON });
    expect(status.crmCredentials).toEqual({ heldJobs: 1, reason: REASON });
    const metrics = await (await fetch(`${worker.handle.url}/metrics`)).text();
    expect(metrics).toContain('crmsync_crm_credentials_ok{crm="hubspot"} 0');
    const warnings = worker.logLines.filter((l) => l.includes('"level":40') && l.includes(REASON));
    expect(warnings).toHaveLength(1);
    expect(worker.logLines.join('')).not.toContain(hs!.accessToken);

    // The admin restores the token: the next probe (every 30 s) sees it, the job runs at once.
    await adminPost(`${hs!.url}/_admin/tokens/restore`);
    const waited = await tickUntil(
      clock,
      'the context to be pushed after the token works again',
      async () => (await worker.call('call_live'))?.state === 'context_pushed',
      { stepMs: 1_000 },
    );
    expect(waited).toBeLessThanOrEqual(60_000);
    expect((await worker.get('/readyz')).status).toBe(200);
    expect((await worker.get<StatusSnapshot>('/status')).body.crmCredentials.heldJobs).toBe(0);
    const after = await (await fetch(`${worker.handle.url}/metrics`)).text();
    expect(after).toContain('crmsync_crm_credentials_ok{crm="hubspot"} 1');
    expect(svc!.state.contexts('call_live')).toHaveLength(1);
  });

  it('run the jobs they held back at once after a restart with working credentials', async () => {
    const clock = new FakeClock();
    await setup(clock);
    const first = await start(clock);
    await heldOnCrmAuth(clock, first);
    await first.handle.stop(1_000);

    // A new token is set (here: the same one, restored) and the worker restarted on its database.
    await adminPost(`${hs!.url}/_admin/tokens/restore`);
    const startedAt = clock.now();
    const second = await start(clock, { PORT: first.env.PORT!, DATA_DIR: first.env.DATA_DIR! });
    await tickUntil(
      clock,
      'the held context job to run after the restart',
      async () => (await second.call('call_live'))?.state === 'context_pushed',
    );
    // Well before the five minutes the job was held for.
    expect(clock.now() - startedAt).toBeLessThan(60_000);
    expect((await second.get('/readyz')).status).toBe(200);
  });
});
