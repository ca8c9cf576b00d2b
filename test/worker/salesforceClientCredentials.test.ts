/**
 * A worker configured with nothing but an External Client App's consumer key and secret and the
 * org's My Domain login URL (the Salesforce sandbox's URL stands for it) writes calls, before and
 * after the access token expires: client credentials have no refresh token, the worker asks for a
 * new token. Sandboxes and worker share one fake clock; the token lives one minute.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { FakeClock } from '../../src/util/fakeClock.js';
import { requestCounts, testJwtKeys } from '../crm-salesforce/helpers.js';
import { completeCall, createCall } from '../e2e/harness.js';
import { salesforceTasks } from '../e2e/readback.js';
import {
  adminPost,
  ROOMY_LIMITS,
  startInProcessWorker,
  tickUntil,
  type InProcessWorker,
} from './inProcess.js';

const TOKEN_TTL_MS = 60_000;
const DANA = { name: 'Dana Deals', email: 'dana@umbrella.example', company: 'Umbrella Inc' };

let clock: FakeClock;
let svc: ServiceSandbox;
let sf: SalesforceSandbox;
let worker: InProcessWorker;

beforeAll(async () => {
  clock = new FakeClock();
  [svc, sf] = await Promise.all([
    startServiceSandbox({ clock, seedCalls: 0, limits: ROOMY_LIMITS, analysisDelayMs: 1_000 }),
    startSalesforceSandbox({ clock, tokenTtlMs: TOKEN_TTL_MS, jwtKeys: testJwtKeys() }),
  ]);
  worker = await startInProcessWorker(clock, svc, null, {
    CRM: 'salesforce',
    SALESFORCE_LOGIN_URL: sf.url,
    SALESFORCE_CLIENT_ID: sf.oauth.clientId,
    SALESFORCE_CLIENT_SECRET: sf.oauth.clientSecret,
  });
  await adminPost(`${svc.url}/_admin/config`, { webhookUrl: `${worker.handle.url}/webhooks` });
});

afterAll(async () => {
  await worker?.close();
  await Promise.all([svc?.close(), sf?.close()]);
});

async function writeOneCall(): Promise<string> {
  const id = await createCall(svc, DANA);
  await completeCall(svc, id);
  await tickUntil(
    clock,
    `call ${id} to be written back`,
    async () => (await worker.call(id))?.state === 'written_back',
    { stepMs: 2_000, describe: () => worker.call(id) },
  );
  return id;
}

describe('Salesforce client credentials', { timeout: 120_000 }, () => {
  it('a worker with only client id, secret and My Domain writes calls across an access-token expiry', async () => {
    const first = await writeOneCall();
    const tokensBefore = (await requestCounts(sf)).counts['POST /services/oauth2/token'] ?? 0;
    expect(tokensBefore).toBeGreaterThanOrEqual(1);

    await clock.advance(TOKEN_TTL_MS + 1);
    const second = await writeOneCall();

    for (const id of [first, second]) expect(salesforceTasks(sf, id)).toHaveLength(1);
    const log = await requestCounts(sf);
    // The expired token met a 401, and a new one was requested with the client credentials.
    expect(log.counts['POST /services/oauth2/token']).toBeGreaterThan(tokensBefore);
    expect(log.recent.some((r) => r.status === 401)).toBe(true);
    expect((await worker.get('/readyz')).status).toBe(200);
    expect(worker.logLines.join('')).not.toContain(sf.oauth.clientSecret);
  });
});
