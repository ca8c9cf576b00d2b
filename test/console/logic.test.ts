import { describe, expect, it } from 'vitest';
import { recordLinker } from '../../src/console/links.js';
import { projectDailyCap } from '../../src/budget/forecast.js';
import { formatStatus } from '../../src/cli/statusFormat.js';
import { crmCredentialsRejected, standingWarnings } from '../../src/console/warnings.js';
import { fixHint } from '../../src/console/hints.js';
import { boundAddress } from '../../src/worker/boundAddress.js';
import type { StatusSnapshot } from '../../src/ops/status.js';

const NOW = Date.UTC(2026, 0, 7, 12, 0);

describe('daily cap projection', () => {
  const base = { usedToday: 4000, dailyCap: 10_000, nowMs: NOW };
  it('runs out today when the last minute’s pace would spend the rest before midnight UTC', () => {
    // 6,000 left at 10/min = 600 min = 10 h: 22:00 UTC.
    expect(projectDailyCap({ ...base, inLastMinute: 10 })).toEqual({
      kind: 'runs_out',
      at: new Date(Date.UTC(2026, 0, 7, 22, 0)),
    });
  });
  it('lasts the day at a slower pace, and says so when idle, spent or unlimited', () => {
    expect(projectDailyCap({ ...base, inLastMinute: 5 }).kind).toBe('lasts_today');
    expect(projectDailyCap({ ...base, inLastMinute: 0 }).kind).toBe('idle');
    expect(projectDailyCap({ ...base, usedToday: 10_000, inLastMinute: 3 }).kind).toBe('reached');
    expect(projectDailyCap({ ...base, dailyCap: null, inLastMinute: 3 }).kind).toBe('unlimited');
  });
});

function snapshot(over: Partial<StatusSnapshot> = {}): StatusSnapshot {
  return {
    generatedAt: new Date(NOW).toISOString(),
    crm: 'hubspot',
    calls: {},
    recentFailures: [],
    budget: {
      plan: { ratePerMinute: 60, burstPerSecond: 10, dailyCap: 100 },
      usedToday: 10,
      dailyCap: 100,
      inLastSecond: 0,
      inLastMinute: 0,
      pausedUntil: null,
    },
    jobs: { byState: {}, queuedByPriority: {} },
    cursor: { position: null, lastCallCreatedAt: null, updatedAt: null, ageSeconds: null },
    recentSkips: [],
    crmCredentials: { heldJobs: 0, reason: null },
    forecast: { dailyCap: { kind: 'idle', at: null }, backfill: null },
    drift: [],
    ...over,
  };
}

describe('standing warnings', () => {
  it('is empty when all is well', () => {
    expect(standingWarnings(snapshot())).toEqual([]);
  });
  it('names a rejected key, rejected CRM credentials, a spent cap, then the drift warnings', () => {
    const s = snapshot({
      worker: { serviceKeyRejected: true, crmCredentials: { accepted: false } },
      budget: { ...snapshot().budget, usedToday: 100 },
      drift: [{ condition: 'webhook_silence', code: 'WEBHOOK_SILENCE', message: 'no webhooks' }],
    });
    expect(standingWarnings(s).map((w) => w.code)).toEqual([
      'SERVICE_KEY_REJECTED',
      'CRM_CREDENTIALS_REJECTED',
      'DAILY_CAP_REACHED',
      'WEBHOOK_SILENCE',
    ]);
  });
  it('names each field calls are written without and each CRM rule refusal, with the fix (issue 21)', () => {
    const s = snapshot({
      crmStanding: {
        fieldGaps: [
          {
            object: 'EmailMessage',
            field: 'CrmSync_Call_Id__c',
            since: '2026-11-28T10:00:00.000Z',
            fix: 'create EmailMessage.CrmSync_Call_Id__c in Salesforce Setup',
          },
        ],
        refusals: [{ calls: 3, message: 'the portal requires `hs_call_disposition` on calls: map it' }],
      },
    });
    expect(standingWarnings(s)).toEqual([
      {
        code: 'CRM_FIELD_MISSING',
        message:
          'calls are written without EmailMessage.CrmSync_Call_Id__c, which the CRM lacks (since 2026-11-28T10:00:00.000Z): create EmailMessage.CrmSync_Call_Id__c in Salesforce Setup',
      },
      {
        code: 'CRM_VALIDATION_REJECTED',
        message:
          '3 call(s) refused: the portal requires `hs_call_disposition` on calls: map it; then `crm-sync replay --code CRM_VALIDATION_REJECTED`',
      },
    ]);
    // `crm-sync status` prints the same, one WARNING line each.
    const text = formatStatus(s);
    expect(text).toContain(
      'WARNING (CRM_FIELD_MISSING): calls are written without EmailMessage.CrmSync_Call_Id__c, which the CRM lacks',
    );
    expect(text).toContain('WARNING (CRM_VALIDATION_REJECTED): 3 call(s) refused: the portal requires');
  });
  it("reads CRM credentials from the worker's own judgement, else from jobs held back on CRM_AUTH", () => {
    expect(crmCredentialsRejected(snapshot({ worker: { crmCredentials: { accepted: false } } }))).toBe(true);
    expect(crmCredentialsRejected(snapshot({ worker: { crmCredentials: { accepted: true } } }))).toBe(false);
    const held = { heldJobs: 2, reason: 'HubSpot access token rejected' };
    expect(crmCredentialsRejected(snapshot({ crmCredentials: held }))).toBe(true);
    expect(
      crmCredentialsRejected(
        snapshot({ worker: { crmCredentials: { accepted: null } }, crmCredentials: held }),
      ),
    ).toBe(true);
    expect(crmCredentialsRejected(snapshot())).toBe(false);
  });
});

describe('CRM record links', () => {
  it('HubSpot: app.hubspot.com with the portal id and the object type id', () => {
    const link = recordLinker({
      crm: 'hubspot',
      hubspot: { baseUrl: 'https://api.hubapi.com', portalId: '4242' },
      salesforce: { loginUrl: '', apiVersion: '62.0' },
    });
    expect(link('contact', '101')).toBe('https://app.hubspot.com/contacts/4242/record/0-1/101');
    expect(link('deal', '7')).toBe('https://app.hubspot.com/contacts/4242/record/0-3/7');
    expect(link('activity', '9')).toBe('https://app.hubspot.com/contacts/4242/record/0-48/9');
  });
  it('HubSpot without a portal id links nowhere; a sandbox links to its own base', () => {
    const none = recordLinker({
      crm: 'hubspot',
      hubspot: { baseUrl: 'https://api.hubapi.com' },
      salesforce: { loginUrl: '', apiVersion: '62.0' },
    });
    expect(none('contact', '1')).toBeNull();
    const sandbox = recordLinker({
      crm: 'hubspot',
      hubspot: { baseUrl: 'http://127.0.0.1:5000/' },
      salesforce: { loginUrl: '', apiVersion: '62.0' },
    });
    expect(sandbox('company', '5')).toBe('http://127.0.0.1:5000/contacts/0/record/0-2/5');
  });
  it('Salesforce: the object from the id’s key prefix', () => {
    const link = recordLinker({
      crm: 'salesforce',
      hubspot: { baseUrl: '' },
      salesforce: { instanceUrl: 'https://acme.my.salesforce.com', loginUrl: '', apiVersion: '62.0' },
    });
    expect(link('contact', '00Q000000000001AAA')).toBe(
      'https://acme.my.salesforce.com/lightning/r/Lead/00Q000000000001AAA/view',
    );
    expect(link('company', '001000000000001AAA')).toBe(
      'https://acme.my.salesforce.com/lightning/r/Account/001000000000001AAA/view',
    );
    expect(link('deal', 'a0X000000000001AAA')).toBe('https://acme.my.salesforce.com/a0X000000000001AAA');
  });
});

describe('fix hints', () => {
  it('has a plain hint for every code, and a fallback', () => {
    expect(fixHint('CRM_SETUP')).toMatch(/doctor/);
    expect(fixHint('SOMETHING_NEW')).toMatch(/replay/);
    expect(fixHint(null)).toMatch(/No error code/);
  });

  it('says held calls resume by themselves once the credentials are fixed, instead of "then replay"', () => {
    for (const code of ['CRM_AUTH', 'SERVICE_UNAUTHORIZED']) {
      expect(fixHint(code)).toContain('the calls held meanwhile resume by themselves, no replay needed');
      expect(fixHint(code)).not.toMatch(/then replay/);
    }
  });
});

describe('bound address', () => {
  it('prints what was bound, and a loopback URL to reach an any-interface bind', () => {
    expect(
      boundAddress({ address: '0.0.0.0', family: 'IPv4', port: 8080 }, { host: '0.0.0.0', port: 8080 }),
    ).toEqual({
      listenUrl: 'http://0.0.0.0:8080',
      localUrl: 'http://127.0.0.1:8080',
      port: 8080,
    });
    expect(
      boundAddress({ address: '::1', family: 'IPv6', port: 9 }, { host: '::1', port: 0 }).listenUrl,
    ).toBe('http://[::1]:9');
  });
});
