/**
 * Issue 21, item 3: a refusal only the CRM's admin can fix (a HubSpot 2026-09 portal rule, a
 * Salesforce validation rule) fails that call alone with CRM_VALIDATION_REJECTED, never retried,
 * while the other calls of the same batch are written; `replay --code CRM_VALIDATION_REJECTED`
 * after the rule is lifted writes it once. Real sandboxes, a real database, the real job outcome.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHubSpotAdapter } from '../../src/crm/hubspot/index.js';
import { createSalesforceAdapter } from '../../src/crm/salesforce/index.js';
import type { CrmAdapter, CrmName } from '../../src/crm/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { loadMappings } from '../../src/mapping/index.js';
import type { Mapping } from '../../src/mapping/types.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { JOB_PRIORITY } from '../../src/store/jobKinds.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { enqueueJob } from '../../src/store/jobEnqueue.js';
import { claimJobs } from '../../src/store/jobQueue.js';
import { getSyncStatus } from '../../src/store/syncStatus/queries.js';
import { collectCrmStanding } from '../../src/ops/crmStanding.js';
import { applyTryResult } from '../../src/worker/jobOutcome.js';
import { replayFailed } from '../../src/ops/replay.js';
import { CONFIG_DIR } from '../cli/helpers.js';
import { sandboxConfig } from '../crm-salesforce/helpers.js';
import { useMigratedDatabase } from '../store/helpers.js';
import { startBatchStack, writeBack, type BatchStack } from './batchStack.js';

const JANE = { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' };
const DANA = { name: 'Dana Scully', email: 'dana@umbrella.example', company: 'Umbrella Inc' };
const WALT = { name: 'Walt Grant', email: 'walt@wayne.example', company: 'Wayne' };

/** The shipped mapping plus `line` among the activity's fields: a value every call but Dana's has. */
function mappingWith(crm: CrmName, after: string, line: string): { mapping: Mapping; dir: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'crm-sync-rule-'));
  mkdirSync(path.join(dir, 'mappings'));
  const file = `mappings/${crm}.yaml`;
  const text = readFileSync(path.join(CONFIG_DIR, file), 'utf8');
  expect(text).toContain(after);
  writeFileSync(path.join(dir, file), text.replace(after, `${after}\n${line}`));
  return { mapping: loadMappings(dir, crm), dir };
}

const NOT_DANA = `call.participant.email != '${DANA.email}'`;

interface Crm {
  name: CrmName;
  adapter: CrmAdapter;
  mapping: Mapping;
  dir: string;
  object: string;
  property: string;
  requireProperty(): Promise<void>;
  liftRules(): Promise<void>;
  /** The call's activities in the CRM, by call id. */
  activities(callId: string): Record<string, unknown>[];
  close(): Promise<void>;
}

async function send(url: string, method: string, body?: unknown): Promise<void> {
  const res = await fetch(url, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : null,
  });
  expect(res.status).toBe(204);
}

describe.each<{ name: CrmName; start: () => Promise<Crm> }>([
  {
    name: 'hubspot',
    start: async () => {
      const hs: HubSpotSandbox = await startHubSpotSandbox();
      const { mapping, dir } = mappingWith(
        'hubspot',
        `      hs_call_direction: { source: "'OUTBOUND'" }`,
        `      hs_call_disposition: { source: "${NOT_DANA} ? 'f240bbac-87c9-4f6e-bf70-924b57d47db7'" }`,
      );
      return {
        name: 'hubspot',
        adapter: createHubSpotAdapter({ config: { baseUrl: hs.url, accessToken: hs.accessToken } }),
        mapping,
        dir,
        object: 'calls',
        property: 'hs_call_disposition',
        requireProperty: () =>
          send(`${hs.url}/_admin/validation-rules`, 'POST', {
            objectType: 'calls',
            property: 'hs_call_disposition',
          }),
        liftRules: () => send(`${hs.url}/_admin/validation-rules`, 'DELETE'),
        activities: (id) =>
          [...hs.state.store.objects.calls.values()]
            .filter((o) => o.properties.crmsync_call_id === id)
            .map((o) => o.properties),
        close: () => hs.close(),
      };
    },
  },
  {
    name: 'salesforce',
    start: async () => {
      const sf: SalesforceSandbox = await startSalesforceSandbox();
      const { mapping, dir } = mappingWith(
        'salesforce',
        `      Type: { source: "'Call'" }`,
        `      CallDisposition: { source: "${NOT_DANA} ? 'Connected'" }`,
      );
      return {
        name: 'salesforce',
        adapter: createSalesforceAdapter({ config: sandboxConfig(sf) }),
        mapping,
        dir,
        object: 'Task',
        property: 'CallDisposition',
        requireProperty: () =>
          send(`${sf.url}/_admin/validation-rules`, 'POST', {
            object: 'Task',
            field: 'CallDisposition',
            message: 'Every logged call needs its Call Result',
          }),
        liftRules: () => send(`${sf.url}/_admin/validation-rules`, 'DELETE'),
        activities: (id) => sf.state.store.all('Task').filter((t) => t.CrmSync_Call_Id__c === id),
        close: () => sf.close(),
      };
    },
  },
])('a refusal only the admin can fix ($name)', ({ name, start }) => {
  const database = useMigratedDatabase('embedded');
  let stack: BatchStack;
  let crm: Crm;
  beforeAll(async () => {
    [stack, crm] = await Promise.all([startBatchStack(), start()]);
  });
  afterAll(async () => {
    await stack?.close();
    await crm?.close();
    if (crm) rmSync(crm.dir, { recursive: true, force: true });
  });

  it('fails that call alone with CRM_VALIDATION_REJECTED, writes the others, and a replay after the rule is lifted writes it once', async () => {
    const db = database().db.prisma;
    const deps = stack.deps(db, crm.adapter, crm.mapping);
    const [jane, dana, walt] = [
      await stack.analysedCall(JANE),
      await stack.analysedCall(DANA),
      await stack.analysedCall(WALT),
    ];
    await crm.requireProperty();

    // One batch: the refused call does not hold back the calls around it.
    const results = await writeBack(deps, [jane!, dana!, walt!]);
    expect(results.get(jane!)).toMatchObject({ kind: 'done' });
    expect(results.get(walt!)).toMatchObject({ kind: 'done' });
    expect(crm.activities(jane!)).toHaveLength(1);
    expect(crm.activities(walt!)).toHaveLength(1);
    expect(crm.activities(dana!)).toHaveLength(0);

    // The job's outcome: failed at once (no retry), the code and the fix in words on the call.
    const refused = results.get(dana!);
    expect(refused?.kind).toBe('error');
    const now = new Date();
    await enqueueJob(db, {
      kind: 'writeback',
      payload: { callId: dana },
      priority: JOB_PRIORITY.writeback,
      now,
    });
    const [job] = await claimJobs(db, { workerId: 'w1', limit: 1, leaseMs: 60_000, now });
    const outcome = {
      db,
      crm: name,
      workerId: 'w1',
      logger: silentLogger,
      metrics: createMetrics({ defaultMetrics: false }),
    };
    await applyTryResult(outcome, job!, dana!, refused as { kind: 'error'; error: unknown }, now.getTime());
    const row = await getSyncStatus(db, dana!, name);
    expect(row).toMatchObject({ state: 'failed', lastErrorCode: 'CRM_VALIDATION_REJECTED' });
    const requires = name === 'hubspot' ? 'the portal requires' : 'the org requires';
    expect(row?.lastErrorMessage).toContain(
      `${requires} \`${crm.property}\` on ${crm.object}: map it in config/mappings or relax`,
    );
    expect(row?.lastErrorMessage).toMatch(
      name === 'hubspot' ? /is required to create a call/ : /Every logged call needs its Call Result/,
    );
    expect(await db.job.findFirst({ where: { id: BigInt(job!.id) } })).toMatchObject({ state: 'failed' });

    // Status, the console and doctor show the refusal and its fix until the call is replayed.
    expect((await collectCrmStanding(db, name)).refusals).toEqual([
      { calls: 1, message: row?.lastErrorMessage },
    ]);

    // The admin lifts the rule; the operator replays the calls failed with that code.
    await crm.liftRules();
    const replayed = await replayFailed(db, name, new Date(), { code: 'CRM_VALIDATION_REJECTED' });
    expect(replayed.callIds).toEqual([dana]);
    expect((await writeBack(deps, [dana!])).get(dana!)).toMatchObject({ kind: 'done' });
    expect(crm.activities(dana!)).toHaveLength(1);
    expect(await getSyncStatus(db, dana!, name)).toMatchObject({ state: 'written_back' });
    expect((await collectCrmStanding(db, name)).refusals).toEqual([]);
    // Written once: writing it again (a retry, a later replay) updates the same activity.
    expect((await writeBack(deps, [dana!])).get(dana!)).toMatchObject({ kind: 'done' });
    expect(crm.activities(dana!)).toHaveLength(1);
  });
});
