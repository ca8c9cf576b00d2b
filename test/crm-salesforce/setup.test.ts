import { afterEach, describe, expect, it } from 'vitest';
import { createSalesforceAdapter } from '../../src/crm/salesforce/index.js';
import type { FieldRequirement } from '../../src/crm/types.js';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { sandboxConfig, testJwtKeys } from './helpers.js';

const REQUIRED: FieldRequirement[] = [
  { object: 'Task', name: 'CrmSync_Score_Overall__c', type: 'number' },
  { object: 'Task', name: 'CrmSync_Objections_Detected__c', type: 'number' },
  { object: 'EmailMessage', name: 'CrmSync_Followup_Id__c', type: 'string', unique: true },
];

let sb: SalesforceSandbox | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe('Salesforce verifySetup', () => {
  it('passes on an org with the custom fields, checking credentials and each field', async () => {
    sb = await startSalesforceSandbox({ jwtKeys: testJwtKeys() });
    const report = await createSalesforceAdapter({ config: sandboxConfig(sb) }).verifySetup(REQUIRED);
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.name)).toEqual([
      'credentials',
      'API version',
      'Task.CrmSync_Call_Id__c',
      'Task.CrmSync_Score_Overall__c',
      'Task.CrmSync_Objections_Detected__c',
      'EmailMessage.CrmSync_Followup_Id__c',
    ]);
    expect(report.checks[0]!.detail).toContain('/15000');
  });

  it('names each missing field with how to create it, since Salesforce cannot create fields over REST', async () => {
    sb = await startSalesforceSandbox({ withCustomFields: false, jwtKeys: testJwtKeys() });
    const report = await createSalesforceAdapter({ config: sandboxConfig(sb) }).verifySetup(REQUIRED, {
      fix: true,
    });
    expect(report.ok).toBe(false);
    const key = report.checks.find((c) => c.name === 'Task.CrmSync_Call_Id__c');
    expect(key).toMatchObject({ ok: false, detail: 'missing' });
    expect(key?.fix).toContain('External ID, Unique');
    expect(report.checks.find((c) => c.name === 'Task.CrmSync_Score_Overall__c')?.fix).toContain(
      'Number(16, 2)',
    );
    expect(report.checks.at(-1)).toMatchObject({ name: 'fix', ok: false });
  });

  it('refuses fields of the wrong type, not unique, or not writable', async () => {
    sb = await startSalesforceSandbox({ jwtKeys: testJwtKeys() });
    const report = await createSalesforceAdapter({ config: sandboxConfig(sb) }).verifySetup([
      { object: 'Task', name: 'Subject', type: 'number' },
      { object: 'Task', name: 'CallDisposition', type: 'string', unique: true },
      { object: 'Task', name: 'IsClosed', type: 'boolean' },
      { object: 'Task', name: 'Description', type: 'text' },
    ]);
    const byName = Object.fromEntries(report.checks.map((c) => [c.name, c]));
    expect(byName['Task.Subject']).toMatchObject({ ok: false, detail: 'is string, needs number' });
    expect(byName['Task.CallDisposition']).toMatchObject({
      ok: false,
      detail: 'string, but not marked External ID (upserts on it are refused)',
      fix: 'Edit Task.CallDisposition: tick External ID and Unique',
    });
    expect(byName['Task.IsClosed']).toMatchObject({
      ok: false,
      detail: 'not writable by the integration user',
    });
    expect(byName['Task.Description']).toMatchObject({ ok: true });
    expect(report.ok).toBe(false);
  });

  it('checks the External ID and Unique flags of the upsert keys, not only their type', async () => {
    sb = await startSalesforceSandbox({ jwtKeys: testJwtKeys() });
    const fields = [...sb.state.store.schema.values()].flatMap((o) =>
      o.fields.filter((f) => f.name === 'CrmSync_Followup_Id__c').map((f) => ({ object: o.name, f })),
    );
    const onEmail = fields.find((x) => x.object === 'EmailMessage')!.f;
    const onTask = fields.find((x) => x.object === 'Task')!.f;
    // An admin created the fields as plain Text(255): External ID unticked on one, Unique on the other.
    onEmail.externalId = false;
    onTask.unique = false;
    const report = await createSalesforceAdapter({ config: sandboxConfig(sb) }).verifySetup([
      { object: 'EmailMessage', name: 'CrmSync_Followup_Id__c', type: 'string', unique: true },
      { object: 'Task', name: 'CrmSync_Followup_Id__c', type: 'string', unique: true },
    ]);
    expect(report.checks.slice(2)).toEqual([
      {
        name: 'EmailMessage.CrmSync_Followup_Id__c',
        ok: false,
        detail: 'string, but not marked External ID (upserts on it are refused)',
        fix: 'Edit EmailMessage.CrmSync_Followup_Id__c: tick External ID',
      },
      {
        name: 'Task.CrmSync_Followup_Id__c',
        ok: false,
        detail: 'External ID, but not Unique',
        fix: 'Edit Task.CrmSync_Followup_Id__c: tick Unique',
      },
    ]);
    expect(report.ok).toBe(false);
  });

  it('reports bad credentials as a failed check without a secret in it', async () => {
    sb = await startSalesforceSandbox({ jwtKeys: testJwtKeys() });
    const report = await createSalesforceAdapter({
      config: sandboxConfig(sb, { accessToken: 'not-a-token' }),
    }).verifySetup(REQUIRED);
    expect(report).toMatchObject({ ok: false, checks: [{ name: 'credentials', ok: false }] });
    expect(JSON.stringify(report)).not.toContain('not-a-token');
  });
});
