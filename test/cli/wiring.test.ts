import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeFailure } from '../../src/cli/commands/doctorService.js';
import { createCrmAdapter } from '../../src/crm/factory.js';
import * as shared from '../../src/crm/freemail.js';
import * as hubspotFreemail from '../../src/crm/hubspot/freemail.js';
import * as salesforceFreemail from '../../src/crm/salesforce/freemail.js';
import type { Mapping } from '../../src/mapping/types.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import {
  ServiceDailyCapError,
  ServiceForbiddenError,
  ServiceNotFoundError,
  ServiceRateLimitedError,
  ServiceTransientError,
} from '../../src/service/errors.js';
import { configFrom, hubspotEnv, jwtKeys, REPO_ROOT, salesforceEnv } from './helpers.js';

const WHERE = 'https://api.example.com';
const CTX = { method: 'GET', path: '/v1/calls' };

describe('doctor: what a failed GET /v1/calls means', () => {
  it('403: the key is refused for this workspace scope', () => {
    const check = describeFailure(new ServiceForbiddenError('403', { ...CTX, status: 403 }), WHERE);
    expect(check).toMatchObject({ ok: false, detail: expect.stringMatching(/403 Forbidden/) });
    expect(check.fix).toMatch(/workspace scope/);
  });

  it('429 for rate: the key works (limits are counted per key)', () => {
    const err = new ServiceRateLimitedError('429', { ...CTX, status: 429 }, 1000);
    expect(describeFailure(err, WHERE)).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/^accepted/),
    });
  });

  it('429 daily cap: fails, saying until when', () => {
    const resetsAt = Date.UTC(2026, 10, 23);
    const check = describeFailure(new ServiceDailyCapError('429', { ...CTX, status: 429 }, resetsAt), WHERE);
    expect(check).toMatchObject({ ok: false, detail: expect.stringContaining('2026-11-23T00:00:00.000Z') });
  });

  it('5xx, timeout and 404 each get their own words', () => {
    const status = new ServiceTransientError('503', { ...CTX, status: 503 }, 'status');
    expect(describeFailure(status, WHERE).detail).toBe(
      `the Service at ${WHERE} answered 503: it may be down, try again later`,
    );
    const timeout = new ServiceTransientError('slow', CTX, 'timeout');
    expect(describeFailure(timeout, WHERE).detail).toBe(`unreachable: ${WHERE} did not answer in time`);
    const missing = new ServiceNotFoundError('404', { ...CTX, status: 404 });
    expect(describeFailure(missing, WHERE).fix).toMatch(/without \/v1/);
    expect(describeFailure(new Error('boom'), WHERE)).toMatchObject({
      ok: false,
      detail: 'could not check: boom',
    });
  });
});

describe('one free-mail list', () => {
  it('both adapters use the shared list and functions', () => {
    expect(hubspotFreemail.FREE_MAIL_DOMAINS).toBe(shared.FREE_MAIL_DOMAINS);
    expect(hubspotFreemail.isFreeMailDomain).toBe(shared.isFreeMailDomain);
    expect(salesforceFreemail.FREE_MAIL_DOMAINS).toBe(shared.FREE_MAIL_DOMAINS);
    expect(salesforceFreemail.isFreeMailDomain).toBe(shared.isFreeMailDomain);
  });

  it('matches exact domains, ignoring case, spaces and a trailing dot', () => {
    expect(shared.isFreeMailDomain(' GMail.com. ')).toBe(true);
    expect(shared.isFreeMailDomain('rocketmail.com')).toBe(true);
    expect(shared.isFreeMailDomain('mail.gmail.com')).toBe(false);
    expect(shared.emailDomain('Sam@Yahoo.CO.UK')).toBe('yahoo.co.uk');
    expect(shared.emailDomain('@nobody')).toBeUndefined();
  });
});

describe('createCrmAdapter', () => {
  let svc: ServiceSandbox;
  let hs: HubSpotSandbox;
  let sf: SalesforceSandbox;
  beforeAll(async () => {
    [svc, hs, sf] = await Promise.all([
      startServiceSandbox({ seedCalls: 1 }),
      startHubSpotSandbox(),
      startSalesforceSandbox({ jwtKeys: jwtKeys() }),
    ]);
  });
  afterAll(() => Promise.all([svc.close(), hs.close(), sf.close()]));

  const keyedOn = (object: string, idField: string): Pick<Mapping, 'writeback'> => ({
    writeback: { activity: { object, idField, fields: [] }, followups: null },
  });

  it('builds the adapter config.crm names', async () => {
    expect((await createCrmAdapter(configFrom(hubspotEnv(svc, hs)))).name).toBe('hubspot');
    expect((await createCrmAdapter(configFrom(salesforceEnv(svc, sf)))).name).toBe('salesforce');
  });

  it('HubSpot: upserts on the mapping id field when a write names none', async () => {
    const adapter = await createCrmAdapter(configFrom(hubspotEnv(svc, hs)), {
      mapping: keyedOn('calls', 'crmsync_alt_call_id'),
    });
    const key = { object: 'calls', name: 'crmsync_alt_call_id', type: 'string' as const, unique: true };
    expect((await adapter.verifySetup([key], { fix: true })).ok).toBe(true);
    const write = {
      callId: 'call_wiring_1',
      properties: { hs_timestamp: '2026-11-20T10:00:00.000Z', hs_call_title: 'wiring' },
      links: {},
    };
    const [first] = await adapter.upsertActivities([write]);
    const [second] = await adapter.upsertActivities([write]);
    expect(first).toMatchObject({ ok: true, created: true });
    expect(second).toMatchObject({ ok: true, created: false });
    const id = first?.ok ? first.id : '';
    expect(hs.state.store.get('calls', id)?.properties.crmsync_alt_call_id).toBe('call_wiring_1');
  });

  it('Salesforce: doctor checks the mapping id field as the activity key', async () => {
    const adapter = await createCrmAdapter(configFrom(salesforceEnv(svc, sf)), {
      mapping: keyedOn('Task', 'Alt_Call_Id__c'),
    });
    const report = await adapter.verifySetup([]);
    expect(report.checks.map((c) => [c.name, c.ok])).toEqual([
      ['credentials', true],
      ['API version', true],
      ['Task.Alt_Call_Id__c', false],
    ]);
  });
});

describe('holdProcessOpen', () => {
  /** A process whose only pending work is an unref'd core timer, like a backoff in doctor. */
  const waitOnCoreTimer = (hold: boolean) =>
    promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import { holdProcessOpen } from './src/cli/keepAlive.ts';
         import { sleep, systemClock } from './src/util/clock.ts';
         const release = ${hold} ? holdProcessOpen() : () => {};
         await sleep(systemClock, 50);
         release();
         console.log('done');`,
      ],
      { cwd: REPO_ROOT },
    ).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
    );

  it('keeps the process running until released; without it Node ends with 13', async () => {
    const [held, unheld] = await Promise.all([waitOnCoreTimer(true), waitOnCoreTimer(false)]);
    expect(held).toEqual({ code: 0, stdout: 'done\n' });
    expect(unheld).toEqual({ code: 13, stdout: '' });
  });
});
