import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/util/fakeClock.js';
import type { CrmStanding } from '../../src/ops/crmStanding.js';
import { workerReadiness } from '../../src/worker/readinessChecks.js';

const base = {
  pingDatabase: async () => 1,
  serviceHealth: () => ({ unauthorized: false }),
  crm: () => ({ ok: true }),
  clock: new FakeClock(),
};

describe('/readyz checks.crmFields (issue 21)', () => {
  it('names the fields calls are written without and counts the refused calls, without failing readiness', async () => {
    const standing: CrmStanding = {
      fieldGaps: [
        {
          object: 'EmailMessage',
          field: 'CrmSync_Call_Id__c',
          since: '2026-11-28T10:00:00.000Z',
          fix: 'create EmailMessage.CrmSync_Call_Id__c in Salesforce Setup',
        },
      ],
      // The CRM's own words stay behind the admin access (status), never on this open page.
      refusals: [{ calls: 2, message: 'the org requires `X` on Task (Salesforce: rule text)' }],
    };
    const report = await workerReadiness({ ...base, crmStanding: async () => standing })();
    expect(report.ready).toBe(true);
    expect(report.checks.crmFields).toEqual({
      ok: true,
      detail:
        'CRM_FIELD_MISSING: calls are written without EmailMessage.CrmSync_Call_Id__c, which the CRM lacks (since 2026-11-28T10:00:00.000Z): create EmailMessage.CrmSync_Call_Id__c in Salesforce Setup\n' +
        'CRM_VALIDATION_REJECTED: 2 call(s) refused by a CRM rule (see crm-sync status)',
    });
    expect(report.checks.crmFields?.detail).not.toContain('rule text');
  });

  it('says none when all is well, and stays ready when the table cannot be read', async () => {
    const none = await workerReadiness({
      ...base,
      crmStanding: async () => ({ fieldGaps: [], refusals: [] }),
    })();
    expect(none.checks.crmFields).toEqual({ ok: true, detail: 'none' });
    const broken = await workerReadiness({
      ...base,
      crmStanding: () => Promise.reject(new Error('relation "crm_field_gap" does not exist')),
    })();
    expect(broken.ready).toBe(true);
    expect(broken.checks.crmFields).toEqual({ ok: true, detail: 'not read (see the database check)' });
  });
});
