/**
 * Silence detection through the real worker: the poller finds calls while no verified webhook
 * comes, and /status, /metrics and the log say so; a verified webhook clears it at the next
 * check. Also: /status carries the budget forecast. The poll runs every real second (node-cron);
 * the worker's clock is fake, so the minute between drift checks passes when the test says, and
 * the test moves it while waiting (the budget paces the poll's requests on it).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { signWebhookBody } from '../../src/http/signature.js';
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

let svc: ServiceSandbox | undefined;
let hs: HubSpotSandbox | undefined;
let worker: InProcessWorker | undefined;

afterEach(async () => {
  await worker?.close().catch(() => undefined);
  await Promise.all([svc?.close(), hs?.close()]);
});

async function metric(w: InProcessWorker, series: string): Promise<string | undefined> {
  const text = await (await fetch(`${w.handle.url}/metrics`)).text();
  return text
    .split('\n')
    .find((l) => l.startsWith(`${series} `))
    ?.slice(series.length + 1);
}

describe('silence detection in the running worker', { timeout: 120_000 }, () => {
  it('raises webhook silence in /status, the gauge and a warn line, and clears it on a verified webhook', async () => {
    const clock = new FakeClock(Date.UTC(2026, 3, 1, 9));
    // No webhook URL at the Service: its events go nowhere, as with a broken subscription.
    svc = await startServiceSandbox({ clock, seedCalls: 0, limits: ROOMY_LIMITS });
    hs = await startHubSpotSandbox({ clock, limits: { perWindow: 10_000 } });
    worker = await startInProcessWorker(clock, svc, hs, { POLL_SCHEDULE: '* * * * * *' });
    const w = worker;
    const gauge = 'crmsync_drift_warning{condition="webhook_silence"}';
    expect(await metric(w, gauge)).toBe('0');

    await adminPost(`${svc.url}/_admin/calls`, {
      id: 'call_quiet',
      participant: { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' },
    });
    // The budget paces the poll's list request on the fake clock: move it while waiting.
    await tickUntil(
      clock,
      'the poller to find the call',
      async () => (await w.call('call_quiet')) !== undefined,
    );
    // The next drift check is due a minute after the first.
    await clock.advance(61_000);
    await tickUntil(clock, 'the gauge to say webhook silence', async () => (await metric(w, gauge)) === '1');
    const status = await w.get<StatusSnapshot>('/status');
    expect(status.body.drift).toEqual([
      expect.objectContaining({
        code: 'WEBHOOK_SILENCE',
        message: expect.stringMatching(/^No verified webhook has ever arrived/),
      }),
    ]);
    expect(w.logLines.map((l) => JSON.parse(l) as { level: number; code?: string })).toContainEqual(
      expect.objectContaining({ level: 40, code: 'WEBHOOK_SILENCE' }),
    );
    // The call waits for its analysis (a job due later): no backlog for a backfill ETA.
    expect(status.body.forecast).toEqual({ dailyCap: { kind: 'unlimited', at: null }, backfill: null });

    // A verified delivery arrives: cleared at the next check.
    const body = JSON.stringify({
      id: 'evt_drift_1',
      type: 'call.started',
      created_at: new Date(clock.now()).toISOString(),
      data: { call_id: 'call_quiet' },
    });
    const res = await fetch(`${w.handle.url}/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-service-signature': signWebhookBody(body, svc.webhookSecret),
      },
      body,
    });
    expect(res.status).toBeLessThan(300);
    expect((await w.get<StatusSnapshot>('/status')).body.drift).toEqual([]);
    await clock.advance(61_000);
    await tickUntil(clock, 'the gauge to clear', async () => (await metric(w, gauge)) === '0');
  });
});
