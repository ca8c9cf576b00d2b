/**
 * Issue 21, item 6: an org with the previous release's field set (no EmailMessage.CrmSync_Call_Id__c,
 * no Opportunity deal-signal fields, no follow-up generation stamp) after an upgrade: every call is
 * written, each with warnings naming what was left out and how to create it; the gaps are stored so
 * the next batch (any replica) sends nothing the CRM refuses; a gap whose field appears is cleared
 * by the periodic re-check. Only the upsert key stops a write: CRM_KEY_FIELD_MISSING.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHubSpotAdapter } from '../../src/crm/hubspot/index.js';
import { createSalesforceAdapter } from '../../src/crm/salesforce/index.js';
import { loadMappings } from '../../src/mapping/index.js';
import { outcomeOf } from '../../src/pipelines/outcome.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { CUSTOM_FIELDS } from '@crm-sync/sandboxes/salesforce/schema';
import { listFieldGaps } from '../../src/store/fieldGapRepo.js';
import { getSyncStatus } from '../../src/store/syncStatus/queries.js';
import { collectCrmStanding, crmStandingLines } from '../../src/ops/crmStanding.js';
import { CONFIG_DIR } from '../cli/helpers.js';
import { sandboxConfig } from '../crm-salesforce/helpers.js';
import { useMigratedDatabase } from '../store/helpers.js';
import { startBatchStack, writeBack, type BatchStack } from './batchStack.js';

const PEOPLE = [
  { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' },
  { name: 'Dana Scully', email: 'dana@umbrella.example', company: 'Umbrella Inc' },
  { name: 'Walt Grant', email: 'walt@wayne.example', company: 'Wayne' },
  { name: 'Bob Smith', email: 'bob.smith@acme.example', company: 'Acme Corp' },
];
const mapping = loadMappings(CONFIG_DIR, 'salesforce');

describe('an org with the previous release’s field set (Salesforce)', () => {
  const database = useMigratedDatabase('embedded');
  let stack: BatchStack;
  let sf: SalesforceSandbox;
  beforeAll(async () => {
    [stack, sf] = await Promise.all([startBatchStack(), startSalesforceSandbox({ fieldSet: 'previous' })]);
  });
  afterAll(async () => {
    await stack?.close();
    await sf?.close();
  });
  const refused = () => sf.state.recentRequests().filter((r) => r.status === 400).length;

  it('writes every call with the warnings, then sends nothing the org refuses, and clears a gap when its field appears', async () => {
    const db = database().db.prisma;
    const deps = stack.deps(db, createSalesforceAdapter({ config: sandboxConfig(sf) }), mapping);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await stack.analysedCall(PEOPLE[i % PEOPLE.length]!));

    const first = await writeBack(deps, ids.slice(0, 4));
    const rows = await Promise.all(ids.slice(0, 4).map((id) => getSyncStatus(db, id, 'salesforce')));
    const figures = {
      written: rows.filter((r) => r?.state === 'written_back').length,
      failed: [...first.values()].filter((r) => r.kind === 'error').length,
      warnings: rows.reduce((n, r) => n + (r?.warnings.length ?? 0), 0),
      refusedRequests: refused(),
    };
    console.warn(`previous release's field set, first batch: ${JSON.stringify(figures)}`);
    expect(figures).toMatchObject({ written: 4, failed: 0 });
    for (const row of rows) {
      expect(row?.warnings).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^FOLLOWUP_STAMP_MISSING: /),
          expect.stringMatching(
            /^CRM_FIELD_MISSING: the CRM has no EmailMessage\.CrmSync_Call_Id__c, so it was written without it; create EmailMessage\.CrmSync_Call_Id__c in Salesforce Setup/,
          ),
        ]),
      );
      expect(row?.crmFollowupIds.length).toBeGreaterThan(0);
    }
    // Each call has its Task and drafts; the opportunity was written without the fields it lacks.
    for (const id of ids.slice(0, 4))
      expect(sf.state.store.all('Task').filter((t) => t.CrmSync_Call_Id__c === id)).toHaveLength(1);
    const gaps = (await listFieldGaps(db, 'salesforce')).map((g) => `${g.object}.${g.field}`);
    expect(gaps).toEqual(
      expect.arrayContaining([
        'EmailMessage.CrmSync_Call_Id__c',
        'Task.CrmSync_Followups_Generated_At__c',
        ...CUSTOM_FIELDS.Opportunity!.map((f) => `Opportunity.${f.name}`),
      ]),
    );

    // Status, /readyz, the console and doctor read the standing warning from here.
    expect(crmStandingLines(await collectCrmStanding(db, 'salesforce'))).toEqual(
      expect.arrayContaining([
        {
          code: 'CRM_FIELD_MISSING',
          message: expect.stringMatching(
            /^calls are written without EmailMessage\.CrmSync_Call_Id__c, which the CRM lacks \(since .*\): create EmailMessage\.CrmSync_Call_Id__c in Salesforce Setup/,
          ),
        },
      ]),
    );

    // The next batch (as another replica would) skips the known gaps: no refused request at all.
    const before = refused();
    const second = await writeBack(deps, ids.slice(4));
    expect([...second.values()].filter((r) => r.kind !== 'done')).toEqual([]);
    expect(refused()).toBe(before);
    console.warn(
      `second batch: ${JSON.stringify({ written: second.size, refusedRequests: refused() - before })}`,
    );

    // The admin creates the draft's call-id field; an hour on, the re-check writes it and clears the gap.
    const email = sf.state.store.schema.get('emailmessage')!;
    email.fields = [
      ...email.fields,
      CUSTOM_FIELDS.EmailMessage!.find((f) => f.name === 'CrmSync_Call_Id__c')!,
    ];
    await db.$executeRaw`UPDATE crm_field_gap SET checked_at = now() - interval '2 hours'`;
    const late = await stack.analysedCall(PEOPLE[0]!);
    const fresh = stack.deps(db, createSalesforceAdapter({ config: sandboxConfig(sf) }), mapping);
    expect((await writeBack(fresh, [late])).get(late)).toMatchObject({ kind: 'done' });
    const left = (await listFieldGaps(db, 'salesforce')).map((g) => `${g.object}.${g.field}`);
    expect(left).not.toContain('EmailMessage.CrmSync_Call_Id__c');
    expect(left).toContain('Task.CrmSync_Followups_Generated_At__c'); // still missing: checked again
    expect(
      sf.state.store.all('EmailMessage').filter((m) => m.CrmSync_Call_Id__c === late).length,
    ).toBeGreaterThan(0);
    expect((await getSyncStatus(db, late, 'salesforce'))?.warnings).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/EmailMessage\.CrmSync_Call_Id__c/)]),
    );
  });

  it('stops only a write whose upsert key is missing, with CRM_KEY_FIELD_MISSING', async () => {
    const db = database().db.prisma;
    const org = await startSalesforceSandbox({ withCustomFields: true });
    try {
      const email = org.state.store.schema.get('emailmessage')!;
      email.fields = email.fields.filter((f) => f.name !== 'CrmSync_Followup_Id__c');
      const deps = stack.deps(db, createSalesforceAdapter({ config: sandboxConfig(org) }), mapping);
      const id = await stack.analysedCall(PEOPLE[1]!);
      const result = (await writeBack(deps, [id])).get(id);
      expect(result?.kind).toBe('error');
      const outcome = outcomeOf((result as { error: unknown }).error, Date.now());
      expect(outcome).toMatchObject({ kind: 'fail', code: 'CRM_KEY_FIELD_MISSING' });
      expect(outcome.message).toMatch(
        /has no EmailMessage\.CrmSync_Followup_Id__c, the upsert key .* nothing was written; create EmailMessage\.CrmSync_Followup_Id__c/,
      );
      // The call's Task went in (its key exists); its drafts wait, stored, for the replay.
      expect(org.state.store.all('Task').filter((t) => t.CrmSync_Call_Id__c === id)).toHaveLength(1);
      expect(org.state.store.all('EmailMessage')).toHaveLength(0);
      expect((await listFieldGaps(db, 'salesforce')).map((g) => g.field)).not.toContain(
        'CrmSync_Followup_Id__c',
      );
    } finally {
      await org.close();
    }
  });
});

describe('a portal without the newer optional properties (HubSpot)', () => {
  const database = useMigratedDatabase('embedded');
  let stack: BatchStack;
  let hs: HubSpotSandbox;
  const hubspot = loadMappings(CONFIG_DIR, 'hubspot');
  beforeAll(async () => {
    [stack, hs] = await Promise.all([startBatchStack(), startHubSpotSandbox()]);
  });
  afterAll(async () => {
    await stack?.close();
    await hs?.close();
  });

  it('writes each call without them, warned; only a missing upsert key stops the write', async () => {
    const db = database().db.prisma;
    const adapter = createHubSpotAdapter({ config: { baseUrl: hs.url, accessToken: hs.accessToken } });
    const deps = stack.deps(db, adapter, hubspot);
    // The notes' call id and the deal signals came with a later release.
    hs.state.store.properties.notes.delete('crmsync_call_id');
    for (const name of [...hs.state.store.properties.deals.keys()].filter((n) => n.startsWith('crmsync_')))
      hs.state.store.properties.deals.delete(name);
    const ids = [await stack.analysedCall(PEOPLE[0]!), await stack.analysedCall(PEOPLE[2]!)];
    const results = await writeBack(deps, ids);
    expect([...results.values()].filter((r) => r.kind !== 'done')).toEqual([]);
    for (const id of ids) {
      const row = await getSyncStatus(db, id, 'hubspot');
      expect(row?.state).toBe('written_back');
      expect(row?.warnings).toContainEqual(
        'CRM_FIELD_MISSING: the CRM has no notes.crmsync_call_id, so it was written without it; run `crm-sync doctor --fix` to create the notes property crmsync_call_id',
      );
      expect(row?.crmFollowupIds.length).toBeGreaterThan(0);
    }
    expect((await listFieldGaps(db, 'hubspot')).map((g) => `${g.object}.${g.field}`)).toContain(
      'notes.crmsync_call_id',
    );

    // Without the calls' upsert key nothing can be written once: the call fails, saying so.
    hs.state.store.properties.calls.delete('crmsync_call_id');
    const id = await stack.analysedCall(PEOPLE[3]!);
    const result = (await writeBack(deps, [id])).get(id);
    expect(outcomeOf((result as { error: unknown }).error, Date.now())).toMatchObject({
      kind: 'fail',
      code: 'CRM_KEY_FIELD_MISSING',
      message: expect.stringContaining('HubSpot has no calls.crmsync_call_id, the upsert key'),
    });
  });
});
