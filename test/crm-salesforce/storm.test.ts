import { afterEach, describe, expect, it } from 'vitest';
import {
  CrmDailyLimitError,
  CrmError,
  CrmRateLimitedError,
  CrmTransientError,
} from '../../src/crm/errors.js';
import { createSalesforceAdapter } from '../../src/crm/salesforce/index.js';
import type { ActivityWrite } from '../../src/crm/types.js';
import {
  startSalesforceSandbox,
  type SalesforceSandbox,
  type SalesforceSandboxOptions,
} from '@crm-sync/sandboxes/salesforce';
import { FakeClock } from '../../src/util/fakeClock.js';
import { adminPost, adminRecords, sandboxConfig, testJwtKeys } from './helpers.js';

let sb: SalesforceSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

async function start(opts: SalesforceSandboxOptions = {}): Promise<SalesforceSandbox> {
  sb = await startSalesforceSandbox({ jwtKeys: testJwtKeys(), ...opts });
  return sb;
}

function callWrite(callId: string): ActivityWrite {
  return {
    callId,
    idField: 'CrmSync_Call_Id__c',
    properties: { CrmSync_Call_Id__c: callId, Subject: `Call ${callId}`, Status: 'Completed' },
    links: {},
  };
}

async function tasksFor(s: SalesforceSandbox, prefix: string): Promise<string[]> {
  return (await adminRecords(s, 'Task'))
    .map((t) => String(t.CrmSync_Call_Id__c))
    .filter((k) => k.startsWith(prefix))
    .sort();
}

describe('Salesforce adapter under faults (jsforce against the sandbox)', () => {
  it('a 500 after the collection upsert was carried out fails the write; the retry updates the same Task', async () => {
    const s = await start();
    const adapter = createSalesforceAdapter({ config: sandboxConfig(s) });
    await adminPost(s, 'faults', {
      status: 500,
      errorCode: 'UNKNOWN_EXCEPTION',
      method: 'PATCH',
      acted: true,
    });
    await expect(adapter.upsertActivities([callWrite('c-acted')])).rejects.toBeInstanceOf(CrmTransientError);
    expect(await tasksFor(s, 'c-acted')).toEqual(['c-acted']);
    // The pipeline retries the job: an upsert on the external id, so no second Task.
    expect(await adapter.upsertActivities([callWrite('c-acted')])).toMatchObject([
      { ok: true, created: false },
    ]);
    expect(await tasksFor(s, 'c-acted')).toEqual(['c-acted']);
  });

  it('holds requests after a daily REQUEST_LIMIT_EXCEEDED for the configured pause, then writes once', async () => {
    const s = await start();
    const clock = new FakeClock(Date.now());
    const adapter = createSalesforceAdapter({ config: sandboxConfig(s, { limitPauseMs: 3_000 }), clock });
    await adminPost(s, 'faults', { kind: 'request_limit', method: 'PATCH' });
    const err = await adapter.upsertActivities([callWrite('c-daily')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmDailyLimitError);
    expect((err as CrmDailyLimitError).retryAfterMs).toBe(3_000);
    await expect(adapter.upsertActivities([callWrite('c-daily')])).rejects.toBeInstanceOf(CrmDailyLimitError);
    await clock.advance(3_000);
    expect(await adapter.upsertActivities([callWrite('c-daily')])).toMatchObject([
      { ok: true, created: true },
    ]);
    expect(await tasksFor(s, 'c-daily')).toEqual(['c-daily']);
  });

  it('answers the concurrent-request REQUEST_LIMIT_EXCEEDED with a short wait, not the daily hold', async () => {
    const s = await start({ faultRates: { rateLimitRate: 1 } });
    const adapter = createSalesforceAdapter({ config: sandboxConfig(s) });
    const err = await adapter.upsertActivities([callWrite('c-limit')]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmRateLimitedError);
    expect((err as CrmRateLimitedError).retryAfterMs).toBeLessThanOrEqual(5_000);
    expect(adapter.usage().rateLimitedUntil).toBeUndefined();
  });

  it('writes every call exactly once through random REQUEST_LIMIT_EXCEEDED, 5xx and expiring sessions', async () => {
    const s = await start({
      faultRates: { rateLimitRate: 0.15, errorRate: 0.2, actedShare: 1 },
      faultSeed: 11,
    });
    const adapter = createSalesforceAdapter({
      config: sandboxConfig(s, {
        accessToken: undefined,
        clientId: s.oauth.clientId,
        clientSecret: s.oauth.clientSecret,
        refreshToken: s.oauth.refreshToken,
      }),
    });
    const ids = Array.from({ length: 12 }, (_, i) => `c-storm-${i}`);
    const pending = new Set(ids);
    const seen = new Set<string>();
    // The pipeline tries a failed write again later; rounds stand in for that here.
    for (let round = 0; round < 6 && pending.size > 0; round++) {
      for (const id of [...pending]) {
        if (Number(id.slice(8)) % 4 === round % 4) s.state.expireTokens();
        try {
          const [r] = await adapter.upsertActivities([callWrite(id)]);
          if (r?.ok) pending.delete(id);
        } catch (e) {
          expect(e).toBeInstanceOf(CrmError);
          seen.add((e as CrmError).constructor.name);
        }
      }
    }
    expect(pending.size).toBe(0);
    expect(await tasksFor(s, 'c-storm-')).toEqual([...ids].sort());
    expect(seen).toEqual(new Set(['CrmRateLimitedError', 'CrmTransientError']));
    const log = s.state.randomFaults.log;
    expect(log.some((f) => f.acted)).toBe(true);
    const recent = (await (await fetch(`${s.url}/_admin/requests`)).json()) as {
      counts: Record<string, number>;
    };
    expect(recent.counts['POST /services/oauth2/token']).toBeGreaterThan(1);
  });
});
