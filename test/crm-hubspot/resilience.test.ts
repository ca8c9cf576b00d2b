import { afterEach, describe, expect, it } from 'vitest';
import { CrmAuthError, CrmDailyLimitError } from '../../src/crm/errors.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { adapterFor, counts, FIELDS, sandbox } from './helpers.js';

const JANE = { email: 'jane.doe@acme.example' };

describe('HubSpot adapter limits, retries and auth (real SDK against the sandbox)', () => {
  let sb: HubSpotSandbox | undefined;
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
  });
  const statuses = (s: HubSpotSandbox) => s.state.requests.records.map((r) => r.status);

  it('recovers from a ten-second-window 429 by waiting the interval HubSpot reports', async () => {
    sb = await sandbox({ limits: { windowMs: 300 } });
    const adapter = adapterFor(sb);
    sb.state.faults.add({ status: 429, policyName: 'TEN_SECONDLY_ROLLING', count: 1 });
    const started = Date.now();
    const r = await adapter.lookup(JANE, FIELDS);
    expect(r.contact?.id).toBe(sb.state.refs.contacts.jane);
    expect(statuses(sb).slice(0, 2)).toEqual([429, 200]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(adapter.usage().requests).toBe(7);
  });

  it('keeps under the rolling window the headers report, so HubSpot never answers 429', async () => {
    sb = await sandbox({ limits: { perWindow: 10, windowMs: 250 } });
    const adapter = adapterFor(sb);
    const results = await Promise.all([1, 2, 3].map(() => adapter.lookup(JANE, FIELDS)));
    expect(results.every((r) => r.deals.length === 4)).toBe(true);
    expect(statuses(sb)).not.toContain(429);
    expect(sb.state.requests.records.length).toBe(18);
  });

  it('stops at the daily limit: a DAILY 429 is not retried and later calls do not reach HubSpot', async () => {
    sb = await sandbox();
    const adapter = adapterFor(sb);
    sb.state.faults.add({ status: 429, policyName: 'DAILY', count: 1 });
    const err = await adapter.lookup(JANE, FIELDS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmDailyLimitError);
    expect((err as CrmDailyLimitError).retryAfterMs).toBeGreaterThan(0);
    await expect(adapter.lookup(JANE, FIELDS)).rejects.toBeInstanceOf(CrmDailyLimitError);
    expect(sb.state.requests.records.length).toBe(1);
    expect(adapter.usage().rateLimitedUntil).toBeGreaterThan(Date.now());
  });

  it('refuses to send once X-HubSpot-RateLimit-Daily-Remaining reaches 0', async () => {
    sb = await sandbox({ limits: { daily: 3 } });
    const adapter = adapterFor(sb);
    await expect(adapter.lookup(JANE, FIELDS)).rejects.toBeInstanceOf(CrmDailyLimitError);
    expect(statuses(sb)).toEqual([200, 200, 200]);
    expect(adapter.usage()).toMatchObject({ requests: 3, remaining: 0, limit: 3 });
  });

  it('refreshes an expired OAuth token once and retries, transparently', async () => {
    sb = await sandbox();
    const grants: string[] = [];
    const adapter = adapterFor(sb, { oauth: true, onTokenRefresh: (g) => grants.push(g.accessToken) });
    expect((await adapter.lookup(JANE, FIELDS)).contact).not.toBeNull();
    sb.state.auth.expireAll();
    const r = await adapter.lookup(JANE, FIELDS);
    expect(r.contact?.id).toBe(sb.state.refs.contacts.jane);
    expect(counts(sb)['POST /oauth/2026-03/token']).toBe(2);
    expect(statuses(sb).filter((s) => s === 401)).toHaveLength(1);
    expect(new Set(grants).size).toBe(2);
    // OAuth apps have no daily allowance, so none is reported.
    expect(adapter.usage().remaining).toBeUndefined();
  });

  it('gives CrmAuthError for a bad private-app token, without retrying', async () => {
    sb = await sandbox();
    const adapter = adapterFor(sb, { config: { baseUrl: sb.url, accessToken: 'pat-wrong' } });
    const err = await adapter.lookup(JANE, FIELDS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmAuthError);
    expect((err as Error).message).toContain('INVALID_AUTHENTICATION');
    expect((err as Error).message).not.toContain('pat-wrong');
    expect(sb.state.requests.records.length).toBe(1);
  });

  it('gives CrmAuthError when the refresh token is refused', async () => {
    sb = await sandbox();
    const adapter = adapterFor(sb, {
      config: {
        baseUrl: sb.url,
        clientId: sb.oauth.clientId,
        clientSecret: sb.oauth.clientSecret,
        refreshToken: 'revoked',
      },
    });
    const err = await adapter.lookup(JANE, FIELDS).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmAuthError);
    expect((err as Error).message).toContain('BAD_REFRESH_TOKEN');
    expect((err as Error).message).not.toContain('revoked');
  });

  it('retries 5xx answers with backoff', async () => {
    sb = await sandbox();
    const adapter = adapterFor(sb);
    sb.state.faults.add({ status: 503, count: 2 });
    const [r] = await adapter.upsertActivities([
      { callId: 'c-5xx', properties: { hs_timestamp: '2026-01-15T10:00:00.000Z' }, links: {} },
    ]);
    expect(r).toMatchObject({ ok: true, created: true });
    expect(statuses(sb)).toEqual([503, 503, 200]);
  });

  it('retries a 500 that came after the upsert was carried out, and the call is still written once', async () => {
    sb = await sandbox();
    const adapter = adapterFor(sb);
    sb.state.faults.add({ status: 500, match: '/batch/upsert', acted: true });
    const [r] = await adapter.upsertActivities([
      { callId: 'c-acted', properties: { hs_timestamp: '2026-01-15T10:00:00.000Z' }, links: {} },
    ]);
    expect(r).toMatchObject({ ok: true, created: false });
    expect(statuses(sb)).toEqual([500, 200]);
    const written = [...sb.state.store.objects.calls.values()].filter(
      (c) => c.properties.crmsync_call_id === 'c-acted',
    );
    expect(written).toHaveLength(1);
  });

  it('writes every call exactly once through random 429s (with the rate-limit headers) and 5xx', async () => {
    sb = await sandbox({
      limits: { windowMs: 200 },
      faultRates: { rateLimitRate: 0.15, errorRate: 0.15, actedShare: 1 },
      faultSeed: 3,
    });
    const adapter = adapterFor(sb);
    const ids = Array.from({ length: 12 }, (_, i) => `c-storm-${i}`);
    const pending = new Set(ids);
    // The pipeline tries a failed write again later; three rounds stand in for that here.
    for (let round = 0; round < 3 && pending.size > 0; round++) {
      for (const id of [...pending]) {
        const [r] = await adapter.upsertActivities([
          { callId: id, properties: { hs_timestamp: '2026-01-15T10:00:00.000Z' }, links: {} },
        ]);
        if (r?.ok) pending.delete(id);
      }
    }
    expect(pending.size).toBe(0);
    const keys = [...sb.state.store.objects.calls.values()].map((c) => c.properties.crmsync_call_id);
    expect(keys.filter((k) => k?.startsWith('c-storm-')).sort()).toEqual([...ids].sort());
    const injected = sb.state.randomFaults.summary().injected;
    expect(injected.rate_limit).toBeGreaterThan(0);
    expect((injected['500'] ?? 0) + (injected['502'] ?? 0)).toBeGreaterThan(0);
    const limited = sb.state.requests.records.find((r) => r.status === 429);
    expect(limited).toBeDefined();
  });
});
