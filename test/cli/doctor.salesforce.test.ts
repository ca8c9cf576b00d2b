import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatChecklist, runDoctor } from '../../src/cli/commands/doctor.js';
import { judgeApiVersion } from '../../src/crm/salesforce/apiVersions.js';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { CrmValidationError } from '../../src/crm/errors.js';
import { listFieldGaps, recordFieldGaps } from '../../src/store/fieldGapRepo.js';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { useMigratedDatabase } from '../store/helpers.js';
import { captureIo, configFrom, jwtKeys, salesforceEnv } from './helpers.js';

let svc: ServiceSandbox;
let bare: SalesforceSandbox;
let ready: SalesforceSandbox;

beforeAll(async () => {
  svc = await startServiceSandbox({ seedCalls: 3 });
  [bare, ready] = await Promise.all([
    startSalesforceSandbox({ withCustomFields: false, jwtKeys: jwtKeys() }),
    startSalesforceSandbox({ withCustomFields: true, jwtKeys: jwtKeys() }),
  ]);
});
afterAll(() => Promise.all([svc.close(), bare.close(), ready.close()]));

describe('doctor with Salesforce and the worker’s database (issue 21)', () => {
  const database = useMigratedDatabase('postgres');

  it('names the fields calls are written without and the calls a rule refused, with the fixes, and clears a gap whose field exists now', async () => {
    const { db, target } = database();
    await recordFieldGaps(db.prisma, 'salesforce', [
      { object: 'Task', field: 'CrmSync_Score_Overall__c' }, // the org has it: cleared
      { object: 'EmailMessage', field: 'CrmSync_Legacy_Note__c' }, // still missing: shown
    ]);
    const refusal = new CrmValidationError('salesforce', 'Task', 'CallDisposition', 'Log the call result');
    await upsertDiscovered(db.prisma, { callId: 'c-refused', crm: 'salesforce', now: new Date() });
    await db.prisma.syncStatus.update({
      where: { callId_crm: { callId: 'c-refused', crm: 'salesforce' } },
      data: { state: 'failed', lastErrorCode: refusal.code, lastErrorMessage: refusal.message },
    });
    const io = captureIo();
    expect(await runDoctor(configFrom(salesforceEnv(svc, ready, { DATABASE_URL: target.url })), io)).toBe(1);
    const text = io.text();
    expect(text).toContain(
      '✖ fields calls are written without: calls are written without EmailMessage.CrmSync_Legacy_Note__c, which the CRM lacks',
    );
    expect(text).toContain('create EmailMessage.CrmSync_Legacy_Note__c in Salesforce Setup');
    expect(text).not.toContain('written without Task.CrmSync_Score_Overall__c');
    expect(text).toContain(
      '✖ calls refused by a CRM rule: 1 call(s) refused: the org requires `CallDisposition` on Task: map it in config/mappings or relax the validation rule',
    );
    expect(text).toContain('`crm-sync replay --code CRM_VALIDATION_REJECTED`');
    expect((await listFieldGaps(db.prisma, 'salesforce')).map((g) => g.field)).toEqual([
      'CrmSync_Legacy_Note__c',
    ]);
  });
});

describe('doctor with Salesforce', () => {
  it('lists each missing field with how to create it; --fix explains that it cannot', async () => {
    const config = configFrom(salesforceEnv(svc, bare));
    const io = captureIo();
    expect(await runDoctor(config, io)).toBe(1);
    const text = io.text();
    expect(text).toMatch(/^✔ Salesforce credentials: signed in/m);
    expect(text).toContain('✖ Salesforce Task.CrmSync_Call_Id__c: missing');
    expect(text).toContain(
      'to fix: In Setup > Object Manager > Task > Fields & Relationships, create "CRM Sync call id" ' +
        '(API name CrmSync_Call_Id__c): Text(255), External ID, Unique (case-insensitive)',
    );
    expect(text).toContain('✖ Salesforce Task.CrmSync_Score_Overall__c: missing');
    expect(text).toContain('(API name CrmSync_Score_Overall__c): Number(16, 2)');
    expect(text).toContain('✖ Salesforce EmailMessage.CrmSync_Followup_Id__c: missing');
    // The follow-up generation stamp crm-sync sets before it asks (issue 22, defect 10).
    expect(text).toContain('(API name CrmSync_Followups_Generated_At__c): Date/Time');
    // The deal signals go on the Opportunity.
    expect(text).toContain('✖ Salesforce Opportunity.CrmSync_Last_Call_Date__c: missing');
    expect(text).toContain(
      'to fix: In Setup > Object Manager > Opportunity > Fields & Relationships, create "CRM Sync Last Call Date" ' +
        '(API name CrmSync_Last_Call_Date__c): Date',
    );
    expect(text).toContain('(API name CrmSync_Average_Score__c): Number(16, 2)');
    expect(text).toContain('(API name CrmSync_Last_Next_Step__c): Text(255)');
    expect(text).not.toContain('doctor --fix');

    const fixing = captureIo();
    expect(await runDoctor(config, fixing, { fix: true })).toBe(1);
    expect(fixing.text()).toContain(
      '✖ Salesforce fix: Salesforce fields cannot be created through the REST API',
    );
    expect(fixing.text()).not.toContain(bare.accessToken);
  });

  it('passes on an org with the fields', async () => {
    const io = captureIo();
    expect(await runDoctor(configFrom(salesforceEnv(svc, ready)), io)).toBe(0);
    expect(io.text()).toContain('✔ Salesforce Task.CrmSync_Call_Id__c: string(255)');
    expect(io.text()).toMatch(/^✔ Salesforce API version: 68\.0 \(the org offers 31\.0 to 68\.0\)$/m);
    expect(io.text()).toMatch(/All 22 checks passed\.$/);
  });

  it('fails the credentials check for a token Salesforce refuses', async () => {
    const token = '00Dxx0000000000!revoked';
    const io = captureIo();
    const config = configFrom(salesforceEnv(svc, ready, { SALESFORCE_ACCESS_TOKEN: token }));
    expect(await runDoctor(config, io)).toBe(1);
    expect(io.text()).toMatch(/^✖ Salesforce credentials: /m);
    // The setting in use and how to renew it (src/crm/credentials.ts), not "the SALESFORCE_* settings".
    expect(io.text()).toContain('to fix: set a new SALESFORCE_ACCESS_TOKEN');
    expect(io.text()).not.toContain(token);
  });

  it('fails when the org does not offer the configured API version, naming the versions it does', async () => {
    const io = captureIo();
    const config = configFrom(salesforceEnv(svc, ready, { SALESFORCE_API_VERSION: '69.0' }));
    expect(await runDoctor(config, io)).toBe(1);
    expect(io.text()).toContain(
      '✖ Salesforce API version: SALESFORCE_API_VERSION 69.0 is not offered by this org; it offers 31.0 to 68.0',
    );
    expect(io.text()).toContain('to fix: set SALESFORCE_API_VERSION=68.0');
    // No field is checked under a version the org refuses.
    expect(io.text()).not.toContain('Task.CrmSync_Call_Id__c');
  });

  it("fails the default version on an org not yet on Winter '27, and says which to set", async () => {
    const spring26 = await startSalesforceSandbox({
      jwtKeys: jwtKeys(),
      apiVersions: { oldest: 31, newest: 66 },
    });
    try {
      const io = captureIo();
      expect(await runDoctor(configFrom(salesforceEnv(svc, spring26)), io)).toBe(1);
      expect(io.text()).toContain(
        'SALESFORCE_API_VERSION 68.0 is not offered by this org; it offers 31.0 to 66.0',
      );
      expect(io.text()).toContain('to fix: set SALESFORCE_API_VERSION=66.0');
      const fixed = captureIo();
      const config = configFrom(salesforceEnv(svc, spring26, { SALESFORCE_API_VERSION: '66.0' }));
      expect(await runDoctor(config, fixed)).toBe(0);
    } finally {
      await spring26.close();
    }
  });

  it('shows a version within a year of retirement as a warning that passes, with its fix', () => {
    const offered = ['61.0', '62.0', '68.0'];
    const table = [{ from: 41, to: 62, release: "Summer '28", retiredOn: '2028-06-01', source: 'test' }];
    const verdict = judgeApiVersion('62.0', offered, Date.parse('2027-09-01'), table);
    const text = formatChecklist([{ name: 'Salesforce API version', ...verdict }], 'salesforce');
    expect(text).toMatch(
      /^⚠ Salesforce API version: 62\.0 is offered, but Salesforce retires 41\.0-62\.0 in Summer '28/m,
    );
    expect(text).toContain('to fix: set SALESFORCE_API_VERSION=68.0');
    expect(text).toMatch(/All 1 checks passed\.$/);
  });
});
