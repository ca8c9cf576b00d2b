/**
 * HubSpot's search limit (five searches per second, CRM search guide "Limitations"): the gate
 * paces searches in a strict sliding second of their own, and a search 429 holds searches only.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CrmRateLimitedError } from '../../src/crm/errors.js';
import { HubSpotSearchLimitError, toCrmError } from '../../src/crm/hubspot/errorMap.js';
import { RequestGate } from '../../src/crm/hubspot/gate.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { sleep } from '../../src/util/clock.js';
import { FakeClock } from '../../src/util/fakeClock.js';
import { adapterFor, FIELDS, sandbox } from './helpers.js';

const sdkError = (code: number, body: unknown) =>
  Object.assign(new Error(`HTTP-Code: ${code}`), { code, body, headers: {} });

describe('search limit in the gate (fake clock)', () => {
  it('starts at most 5 searches in any sliding second, counting each from its response', async () => {
    const clock = new FakeClock();
    const gate = new RequestGate(clock);
    const t0 = clock.now();
    const started: number[] = [];
    // Each search takes 100 ms: HubSpot may have counted it as late as its response.
    const search = async () => {
      started.push(clock.now() - t0);
      await sleep(clock, 100);
    };
    const jobs = Array.from({ length: 12 }, () => gate.run(search, 'search'));
    await clock.advance(3000);
    await Promise.all(jobs);
    expect(started).toEqual([0, 0, 0, 0, 0, 1100, 1100, 1100, 1100, 1100, 2200, 2200]);
    for (const at of started)
      expect(started.filter((s) => s > at - 1000 && s <= at).length).toBeLessThanOrEqual(5);
  });

  it('keeps searches out of the ten-second window, and other requests out of the search second', async () => {
    const clock = new FakeClock();
    const gate = new RequestGate(clock, { perWindow: 3, share: 1 });
    let searches = 0;
    let others = 0;
    const jobs = [
      ...Array.from({ length: 5 }, () => gate.run(async () => void searches++, 'search')),
      ...Array.from({ length: 3 }, () => gate.run(async () => void others++)),
    ];
    await clock.advance(0);
    expect({ searches, others }).toEqual({ searches: 5, others: 3 });
    await Promise.all(jobs);
  });

  it('holds only searches after a search 429; writes and reads go on at once', async () => {
    const clock = new FakeClock();
    const gate = new RequestGate(clock);
    gate.pauseSearchesUntil(clock.now() + 1000);
    const ran: string[] = [];
    const search = gate.run(async () => void ran.push('search'), 'search');
    await gate.run(async () => void ran.push('write'));
    await gate.run(async () => void ran.push('read'));
    expect(ran).toEqual(['write', 'read']);
    await clock.advance(999);
    expect(ran).toEqual(['write', 'read']);
    await clock.advance(1);
    await search;
    expect(ran).toEqual(['write', 'read', 'search']);
  });

  it("reads HubSpot's SECONDLY 429 as the search limit, waited out in about a second", () => {
    const body = {
      status: 'error',
      message: 'You have reached your secondly limit.',
      errorType: 'RATE_LIMIT',
      policyName: 'SECONDLY',
    };
    const err = toCrmError(sdkError(429, body), Date.now());
    expect(err).toBeInstanceOf(HubSpotSearchLimitError);
    expect(err).toBeInstanceOf(CrmRateLimitedError);
    expect((err as CrmRateLimitedError).retryAfterMs).toBe(1000);
    const tenSecondly = toCrmError(sdkError(429, { policyName: 'TEN_SECONDLY_ROLLING' }), Date.now());
    expect(tenSecondly).not.toBeInstanceOf(HubSpotSearchLimitError);
  });
});

describe('search limit through the real SDK against the sandbox', () => {
  let sb: HubSpotSandbox | undefined;
  afterEach(async () => {
    await sb?.close();
    sb = undefined;
  });

  it('a search 429 does not delay a write: the write is answered while the search waits its second', async () => {
    sb = await sandbox();
    const clock = new FakeClock();
    const adapter = adapterFor(sb, { clock });
    sb.state.faults.add({ status: 429, policyName: 'SECONDLY', match: '/search', count: 1 });
    let found = false;
    const lookup = adapter.lookup({ email: 'jane.doe@acme.example' }, FIELDS).then((r) => {
      found = true;
      return r;
    });
    const log = sb.state.requests;
    await vi.waitFor(() => expect(log.records.map((r) => r.status)).toEqual([429]));

    // The adapter's clock stands still: only requests the search 429 does not hold can go out.
    const [write] = await adapter.upsertActivities([
      { callId: 'c-search-429', properties: { hs_timestamp: '2026-01-15T10:00:00.000Z' }, links: {} },
    ]);
    expect(write).toMatchObject({ ok: true, created: true });
    expect(found).toBe(false);
    expect(log.records.some((r) => r.path.endsWith('/search') && r.status === 200)).toBe(false);

    await clock.advance(1000);
    const result = await lookup;
    expect(result.contact?.id).toBe(sb.state.refs.contacts.jane);
    const searches = log.records.filter((r) => r.path.endsWith('/search')).map((r) => r.status);
    expect(searches.slice(0, 2)).toEqual([429, 200]);
  });

  it('paces the searches of 10 simultaneous lookups at 5 per second, so the sandbox enforcing the limit answers no 429', async () => {
    sb = await sandbox();
    const adapter = adapterFor(sb);
    const emails = Array.from({ length: 10 }, (_, i) => ({ email: `nobody${i}@nowhere.example` }));
    await Promise.all(emails.map((p) => adapter.lookup(p, FIELDS)));
    expect(sb.state.requests.count('POST', '/search')).toBeGreaterThanOrEqual(10);
    expect(sb.state.limits.rejected.SECONDLY).toBe(0);
  });
});
