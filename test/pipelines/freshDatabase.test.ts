/**
 * Worker A writes a call; worker B, on a fresh database against the same Service and CRM, meets it
 * in a write-back batch (issue 22, defects 6 and 10). B must adopt only a whole write (the
 * activity re-linked when its association batch failed), and must never ask the Service for
 * follow-ups again: not when the first generation answered no drafts, nor when its answer was lost,
 * nor when a custom mapping leaves the call id off the drafts. The activity's generation stamp is
 * what tells B.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHubSpotAdapter } from '../../src/crm/hubspot/index.js';
import { createSalesforceAdapter } from '../../src/crm/salesforce/index.js';
import type { CrmAdapter, CrmName } from '../../src/crm/types.js';
import { FOLLOWUPS_GENERATED_AT_FIELD, loadMappings } from '../../src/mapping/index.js';
import type { Mapping } from '../../src/mapping/types.js';
import { FOLLOWUP_STAMP_MISSING } from '../../src/pipelines/followupStamp.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { ServiceTransientError } from '../../src/service/errors.js';
import type { ServiceClient } from '../../src/service/types.js';
import { getSyncStatus } from '../../src/store/syncStatus/queries.js';
import { CONFIG_DIR } from '../cli/helpers.js';
import { sandboxConfig } from '../crm-salesforce/helpers.js';
import { useMigratedDatabase } from '../store/helpers.js';
import { answering, startBatchStack, writeBack, type BatchStack } from './batchStack.js';

const JANE = { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' };

const lostAnswer = () =>
  Promise.reject(
    new ServiceTransientError('boom', { method: 'POST', path: '/followups', status: 500 }, 'status'),
  );

interface Crm {
  name: CrmName;
  adapter: CrmAdapter;
  mapping: Mapping;
  /** Removes the generation stamp's field from the org (an upgrade before the admin added it); returns the undo. */
  dropStampField(): () => void;
  close(): Promise<void>;
}

type Started = Crm & { hs?: HubSpotSandbox; sf?: SalesforceSandbox };

describe.each<{ name: CrmName; start: () => Promise<Started> }>([
  {
    name: 'hubspot',
    start: async () => {
      const hs = await startHubSpotSandbox();
      const adapter = createHubSpotAdapter({ config: { baseUrl: hs.url, accessToken: hs.accessToken } });
      const dropStampField = () => {
        const field = FOLLOWUPS_GENERATED_AT_FIELD.hubspot;
        const def = hs.state.store.properties.calls.get(field)!;
        hs.state.store.properties.calls.delete(field);
        return () => void hs.state.store.properties.calls.set(field, def);
      };
      const mapping = loadMappings(CONFIG_DIR, 'hubspot');
      return { name: 'hubspot', adapter, mapping, hs, dropStampField, close: () => hs.close() };
    },
  },
  {
    name: 'salesforce',
    start: async () => {
      const sf: SalesforceSandbox = await startSalesforceSandbox();
      const adapter = createSalesforceAdapter({ config: sandboxConfig(sf) });
      const dropStampField = () => {
        const task = sf.state.store.schema.get('task')!;
        const fields = task.fields;
        task.fields = fields.filter((f) => f.name !== FOLLOWUPS_GENERATED_AT_FIELD.salesforce);
        return () => void (task.fields = fields);
      };
      const mapping = loadMappings(CONFIG_DIR, 'salesforce');
      return { name: 'salesforce', adapter, mapping, sf, dropStampField, close: () => sf.close() };
    },
  },
])('a fresh database meets a call another worker wrote ($name)', ({ name, start }) => {
  const a = useMigratedDatabase('embedded');
  const b = useMigratedDatabase('embedded');
  let stack: BatchStack;
  let crm: Started;
  beforeAll(async () => {
    [stack, crm] = await Promise.all([startBatchStack(), start()]);
  });
  afterAll(async () => {
    await stack?.close();
    await crm?.close();
  });
  const workerA = (over: { service?: ServiceClient; mapping?: Mapping } = {}) =>
    stack.deps(
      a().db.prisma,
      crm.adapter,
      over.mapping ?? crm.mapping,
      over.service ? { service: over.service } : {},
    );
  const workerB = (mapping = crm.mapping) => stack.deps(b().db.prisma, crm.adapter, mapping);

  async function adoptedByB(callId: string, mapping = crm.mapping): Promise<string> {
    const result = (await writeBack(workerB(mapping), [callId])).get(callId);
    expect(result).toMatchObject({ kind: 'done', detail: expect.stringMatching(/^found in the CRM/) });
    expect(await getSyncStatus(b().db.prisma, callId, name)).toMatchObject({ state: 'written_back' });
    return (result as { detail: string }).detail;
  }

  it('asks nothing again when the first generation answered no drafts', async () => {
    const id = await stack.analysedCall(JANE);
    const none = answering(stack.service, () => Promise.resolve([]));
    expect((await writeBack(workerA({ service: none }), [id])).get(id)).toMatchObject({ kind: 'done' });
    await adoptedByB(id);
    expect(stack.generations(id)).toBe(0);
    // B cannot tell "answered none" from "stopped between the stamp and the request": it says so.
    expect((await getSyncStatus(b().db.prisma, id, name))?.warnings).toEqual([
      expect.stringMatching(/^FOLLOWUP_UNCERTAIN: the CRM's activity says follow-ups were asked for at /),
    ]);
  });

  it('asks nothing again when the first generation ended ambiguously (FOLLOWUP_UNCERTAIN)', async () => {
    const id = await stack.analysedCall(JANE);
    const lost = answering(stack.service, lostAnswer);
    expect((await writeBack(workerA({ service: lost }), [id])).get(id)).toMatchObject({ kind: 'done' });
    expect((await getSyncStatus(a().db.prisma, id, name))?.warnings).toEqual([
      expect.stringMatching(/^FOLLOWUP_UNCERTAIN/),
    ]);
    await adoptedByB(id);
    expect(stack.generations(id)).toBe(0);
  });

  it('asks nothing again when a custom mapping leaves the call id off the drafts', async () => {
    const followups = crm.mapping.writeback.followups!;
    const custom: Mapping = {
      ...crm.mapping,
      writeback: {
        ...crm.mapping.writeback,
        followups: {
          ...followups,
          fields: followups.fields.filter((f) => f.name !== crm.mapping.writeback.activity.idField),
        },
      },
    };
    const id = await stack.analysedCall(JANE);
    expect((await writeBack(workerA({ mapping: custom }), [id])).get(id)).toMatchObject({ kind: 'done' });
    expect(stack.generations(id)).toBe(1);
    await adoptedByB(id, custom);
    expect(stack.generations(id)).toBe(1);
  });

  it.runIf(name === 'hubspot')(
    'adopts an activity whose association batch failed only after re-linking it',
    async () => {
      const hs = crm.hs!;
      const id = await stack.analysedCall(JANE);
      expect((await writeBack(workerA(), [id])).get(id)).toMatchObject({ kind: 'done' });
      const engagement = [...hs.state.store.objects.calls.values()].find(
        (o) => o.properties.crmsync_call_id === id,
      )!;
      const links = () =>
        hs.state.store.associations.filter((x) => x.fromType === 'calls' && x.fromId === engagement.id);
      const before = links().map((x) => `${x.toType}:${x.toId}`);
      expect(before.length).toBeGreaterThan(0);
      // As if the association batch had failed after the upsert: the engagement is linked to nothing.
      const kept = hs.state.store.associations.filter(
        (x) =>
          !(x.fromType === 'calls' && x.fromId === engagement.id) &&
          !(x.toType === 'calls' && x.toId === engagement.id),
      );
      hs.state.store.associations.splice(0, hs.state.store.associations.length, ...kept);
      expect(links()).toEqual([]);

      expect(await adoptedByB(id)).toMatch(/re-linked to the current match/);
      expect(
        links()
          .map((x) => `${x.toType}:${x.toId}`)
          .sort(),
      ).toEqual(before.sort());
      expect(stack.generations(id)).toBe(1);
      expect(
        [...hs.state.store.objects.calls.values()].filter((o) => o.properties.crmsync_call_id === id),
      ).toHaveLength(1);
    },
  );

  it('writes the call without the stamp, with a warning, while the CRM lacks the field', async () => {
    const restore = crm.dropStampField();
    try {
      // A new adapter: the Salesforce one caches its describe of Task.
      const adapter =
        name === 'hubspot' ? crm.adapter : createSalesforceAdapter({ config: sandboxConfig(crm.sf!) });
      const id = await stack.analysedCall(JANE);
      const deps = stack.deps(a().db.prisma, adapter, crm.mapping);
      expect((await writeBack(deps, [id])).get(id)).toMatchObject({ kind: 'done' });
      const row = await getSyncStatus(a().db.prisma, id, name);
      expect(row).toMatchObject({ state: 'written_back' });
      const fix = name === 'hubspot' ? 'doctor --fix' : 'docs/install.md';
      expect(row?.warnings).toEqual([
        expect.stringMatching(new RegExp(`^${FOLLOWUP_STAMP_MISSING}: .*${fix}`)),
      ]);
      expect(row?.crmFollowupIds.length).toBeGreaterThan(0);
    } finally {
      restore();
    }
  });
});
