import { describe, expect, it } from 'vitest';
import {
  CrmAuthError,
  CrmDailyLimitError,
  CrmNotFoundError,
  CrmRateLimitedError,
  CrmRejectedError,
  CrmTransientError,
  CrmFieldMissingError,
  CrmValidationError,
} from '../../src/crm/errors.js';
import { toCrmError } from '../../src/crm/hubspot/errorMap.js';
import { emailDomain, isFreeMailDomain } from '../../src/crm/hubspot/freemail.js';
import { RequestGate } from '../../src/crm/hubspot/gate.js';
import { decideRetry, DEFAULT_RETRY_POLICY } from '../../src/crm/hubspot/retry.js';
import { toHubSpotProperties, truncate } from '../../src/crm/hubspot/values.js';
import { sleep } from '../../src/util/clock.js';
import { FakeClock } from '../../src/util/fakeClock.js';

const sdkError = (code: number, body: unknown, headers: Record<string, string> = {}) =>
  Object.assign(new Error(`HTTP-Code: ${code}`), { code, body, headers });

describe('toCrmError', () => {
  const now = Date.UTC(2026, 0, 1, 18, 0, 0);
  it('maps each status to its outcome class', () => {
    expect(toCrmError(sdkError(401, { category: 'EXPIRED_AUTHENTICATION' }), now)).toBeInstanceOf(
      CrmAuthError,
    );
    expect(toCrmError(sdkError(404, {}), now)).toBeInstanceOf(CrmNotFoundError);
    expect(toCrmError(sdkError(502, {}), now)).toBeInstanceOf(CrmTransientError);
    expect(toCrmError(new TypeError('fetch failed'), now)).toBeInstanceOf(CrmTransientError);
  });
  it('takes a ten-second 429 wait from the headers, else 10 s', () => {
    const body = { policyName: 'TEN_SECONDLY_ROLLING' };
    const fromInterval = toCrmError(
      sdkError(429, body, { 'x-hubspot-ratelimit-interval-milliseconds': '2000' }),
      now,
    );
    expect(fromInterval).toBeInstanceOf(CrmRateLimitedError);
    expect((fromInterval as CrmRateLimitedError).retryAfterMs).toBe(2000);
    expect(
      (toCrmError(sdkError(429, body, { 'retry-after': '3' }), now) as CrmRateLimitedError).retryAfterMs,
    ).toBe(3000);
    expect((toCrmError(sdkError(429, body), now) as CrmRateLimitedError).retryAfterMs).toBe(10_000);
  });
  it('makes a DAILY 429 a daily-limit error lasting until UTC midnight', () => {
    const err = toCrmError(sdkError(429, { policyName: 'DAILY' }), now);
    expect(err).toBeInstanceOf(CrmDailyLimitError);
    expect((err as CrmDailyLimitError).retryAfterMs).toBe(6 * 3600_000);
  });
  it('names the rejected properties of a 400 or 409', () => {
    const message =
      'Property values were not valid: [{"isValid":false,"message":"x","error":"PROPERTY_DOESNT_EXIST","name":"foo"}]';
    const err = toCrmError(sdkError(400, { message, category: 'VALIDATION_ERROR' }), now) as CrmRejectedError;
    expect(err).toBeInstanceOf(CrmRejectedError);
    expect(err.fields).toEqual(['foo']);
    const conflict = toCrmError(
      sdkError(409, { errors: [{ context: { propertyName: ['crmsync_call_id'] } }] }),
      now,
    );
    expect((conflict as CrmRejectedError).fields).toEqual(['crmsync_call_id']);
  });
  it('tells a property the portal lacks, a portal rule and a bad value apart', () => {
    const missing = toCrmError(
      sdkError(400, { category: 'VALIDATION_ERROR', message: 'Property "crmsync_x" does not exist' }),
      now,
    );
    expect(missing).toBeInstanceOf(CrmFieldMissingError);
    expect((missing as CrmFieldMissingError).fields).toEqual(['crmsync_x']);
    // 2026-09 write validation (changelog 2026-08-11): a property the portal requires on create.
    const rule = toCrmError(
      sdkError(400, {
        category: 'VALIDATION_ERROR',
        message: 'Property values were not valid',
        errors: [
          {
            code: 'REQUIRED_PROPERTY',
            message: 'a disposition is required',
            context: { propertyName: ['hs_call_disposition'] },
          },
        ],
      }),
      now,
    );
    expect(rule).toBeInstanceOf(CrmValidationError);
    expect(rule).toMatchObject({
      code: 'CRM_VALIDATION_REJECTED',
      property: 'hs_call_disposition',
      retryable: false,
    });
    expect((rule as CrmValidationError).on('calls').message).toBe(
      'the portal requires `hs_call_disposition` on calls: map it in config/mappings or relax the rule (HubSpot: a disposition is required)',
    );
    const value = toCrmError(
      sdkError(400, {
        category: 'VALIDATION_ERROR',
        message: 'x',
        errors: [{ code: 'INVALID_FLOAT', context: { propertyName: ['crmsync_score_overall'] } }],
      }),
      now,
    );
    expect(value).toBeInstanceOf(CrmRejectedError);
    expect(value).not.toBeInstanceOf(CrmFieldMissingError);
  });
});

describe('decideRetry', () => {
  const base = { attempt: 1, canRefresh: true, refreshed: false };
  it('refreshes once on 401 with OAuth, never with a private-app token', () => {
    const auth = new CrmAuthError('x', 'hubspot', 401);
    expect(decideRetry(auth, base)).toMatchObject({ retry: true, refreshAuth: true });
    expect(decideRetry(auth, { ...base, refreshed: true }).retry).toBe(false);
    expect(decideRetry(auth, { ...base, canRefresh: false }).retry).toBe(false);
  });
  it('waits out a 429 that fits maxWaitMs and hands a longer one to the caller', () => {
    expect(decideRetry(new CrmRateLimitedError('x', 'hubspot', 429, 2000), base)).toMatchObject({
      retry: true,
      waitMs: 2000,
    });
    expect(decideRetry(new CrmRateLimitedError('x', 'hubspot', 429, 60_000), base).retry).toBe(false);
  });
  it('backs off transient errors exponentially within the ceiling, and stops after maxAttempts', () => {
    const err = new CrmTransientError('x', 'hubspot', 503);
    const mid = () => 0.5;
    expect(decideRetry(err, base, DEFAULT_RETRY_POLICY, mid)).toMatchObject({ waitMs: 250 });
    expect(decideRetry(err, { ...base, attempt: 3 }, DEFAULT_RETRY_POLICY, mid)).toMatchObject({
      waitMs: 1000,
    });
    expect(
      decideRetry(err, { ...base, attempt: 3 }, { ...DEFAULT_RETRY_POLICY, maxDelayMs: 600 }, mid),
    ).toMatchObject({ waitMs: 600 });
    expect(decideRetry(err, { ...base, attempt: 4 }).retry).toBe(false);
  });
  it('never retries rejected data or a spent daily allowance', () => {
    expect(decideRetry(new CrmRejectedError('x', 'hubspot', 400), base).retry).toBe(false);
    expect(decideRetry(new CrmDailyLimitError('x', 'hubspot', 429, 1000), base).retry).toBe(false);
  });
});

describe('RequestGate (fake clock)', () => {
  const limit = { 'x-hubspot-ratelimit-max': '3', 'x-hubspot-ratelimit-interval-milliseconds': '1000' };

  it('holds requests beyond the reported window until a slot frees, counting from the response', async () => {
    const clock = new FakeClock();
    const gate = new RequestGate(clock, { share: 1 });
    gate.observe(limit);
    const started: number[] = [];
    const t0 = clock.now();
    // Each request takes 300 ms: HubSpot may have counted it as late as its response.
    const request = async () => {
      started.push(clock.now() - t0);
      await sleep(clock, 300);
    };
    const jobs = Array.from({ length: 5 }, () => gate.run(request));
    await clock.advance(0);
    expect(started).toEqual([0, 0, 0]);
    await clock.advance(1299);
    expect(started).toHaveLength(3);
    await clock.advance(1);
    expect(started).toEqual([0, 0, 0, 1300, 1300]);
    await clock.advance(300);
    await Promise.all(jobs);
    expect(gate.usage().requests).toBe(5);
  });

  it('pauses everything after a 429 and refuses to send once the daily allowance is spent', async () => {
    const clock = new FakeClock();
    const gate = new RequestGate(clock);
    gate.pauseUntil(clock.now() + 500);
    let ran = false;
    const job = gate.run(async () => void (ran = true));
    await clock.advance(499);
    expect(ran).toBe(false);
    await clock.advance(1);
    await job;
    expect(ran).toBe(true);
    gate.observe({ 'x-hubspot-ratelimit-daily': '10', 'x-hubspot-ratelimit-daily-remaining': '0' });
    await expect(gate.run(async () => 1)).rejects.toBeInstanceOf(CrmDailyLimitError);
    expect(gate.usage()).toMatchObject({ requests: 1, remaining: 0, limit: 10 });
  });

  it('sends a live call’s request first, on a slot kept for it, however many others wait', async () => {
    const clock = new FakeClock();
    let live = false;
    const gate = new RequestGate(clock, { maxConcurrent: 2, isLive: () => live });
    const started: string[] = [];
    const finish = new Map<string, () => void>();
    const request = (name: string, asLive = false) => {
      live = asLive;
      const done = gate.run(
        () =>
          new Promise<void>((resolve) => {
            started.push(name);
            finish.set(name, resolve);
          }),
      );
      live = false;
      return done;
    };
    const jobs = [request('bulk A'), request('bulk B')];
    await clock.advance(0);
    // One of the two slots is kept for live work: B waits although a slot is free.
    expect(started).toEqual(['bulk A']);
    jobs.push(request('live 1', true));
    await clock.advance(0);
    expect(started).toEqual(['bulk A', 'live 1']);
    jobs.push(request('live 2', true));
    finish.get('bulk A')!();
    await clock.advance(0);
    // B waited longer, but live 2 takes the freed slot.
    expect(started).toEqual(['bulk A', 'live 1', 'live 2']);
    finish.get('live 1')!();
    finish.get('live 2')!();
    await clock.advance(0);
    expect(started).toEqual(['bulk A', 'live 1', 'live 2', 'bulk B']);
    finish.get('bulk B')!();
    await Promise.all(jobs);
  });

  it('keeps a window slot for live work: a full window of others leaves one free for a live call', async () => {
    const clock = new FakeClock();
    let live = false;
    const gate = new RequestGate(clock, { share: 1, isLive: () => live });
    gate.observe(limit);
    const started: string[] = [];
    const run = (name: string) => gate.run(async () => void started.push(name));
    const bulk = [run('bulk 1'), run('bulk 2'), run('bulk 3')];
    await clock.advance(0);
    expect(started).toEqual(['bulk 1', 'bulk 2']);
    live = true;
    const call = run('live');
    live = false;
    await clock.advance(0);
    expect(started).toEqual(['bulk 1', 'bulk 2', 'live']);
    await clock.advance(1000);
    await Promise.all([...bulk, call]);
    expect(started).toEqual(['bulk 1', 'bulk 2', 'live', 'bulk 3']);
  });

  it('keeps a share of the reported limit for other integrations', async () => {
    const clock = new FakeClock();
    const gate = new RequestGate(clock, { share: 0.5 });
    gate.observe({ ...limit, 'x-hubspot-ratelimit-max': '4' });
    let count = 0;
    const jobs = Array.from({ length: 3 }, () => gate.run(async () => void count++));
    await clock.advance(0);
    expect(count).toBe(2);
    await clock.advance(1000);
    await Promise.all(jobs);
    expect(count).toBe(3);
  });
});

describe('values and free-mail', () => {
  it('sends strings, clears with "", and cuts long text without splitting a character', () => {
    expect(toHubSpotProperties({ a: 1.5, b: true, c: null, d: NaN })).toEqual({
      a: '1.5',
      b: 'true',
      c: '',
      d: '',
    });
    expect(toHubSpotProperties({ t: 'abcdef' }, { t: 4 })).toEqual({ t: 'abcd' });
    expect(truncate('ab😀', 3)).toBe('ab');
    expect(toHubSpotProperties({ t: 'y'.repeat(70_000) }).t).toHaveLength(65_536);
  });
  it('knows free-mail domains and extracts domains', () => {
    expect(emailDomain('Sam@GMail.com')).toBe('gmail.com');
    expect(emailDomain('not-an-email')).toBeUndefined();
    expect(isFreeMailDomain('gmail.com')).toBe(true);
    expect(isFreeMailDomain('acme.example')).toBe(false);
  });
});
