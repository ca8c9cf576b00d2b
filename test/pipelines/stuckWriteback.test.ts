/**
 * Issue 22, defect 1: a batch marks a call writing_back, the process dies, and the contact is
 * merged away before the retry. The retry finds nothing to write to, so the call must end
 * (skipped) rather than stay writing_back, be re-queued by housekeeping every five minutes and
 * spend two Service requests and a CRM lookup each time. Real parts: the Service and HubSpot
 * sandboxes over HTTP, the write-back batch, housekeeping, the embedded database.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CrmAdapter } from '../../src/crm/types.js';
import { loadMappings } from '../../src/mapping/index.js';
import { moveTo } from '../../src/pipelines/moveTo.js';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { upsertDiscovered } from '../../src/store/syncStatus/discovered.js';
import { getSyncStatus } from '../../src/store/syncStatus/queries.js';
import { requeueStrandedCalls, STRANDED_AFTER_MS } from '../../src/worker/housekeeping.js';
import { adapterFor } from '../crm-hubspot/helpers.js';
import { useMigratedDatabase } from '../store/helpers.js';
import { startBatchStack, writeBack, type BatchStack } from './batchStack.js';

const mapping = loadMappings(path.join(import.meta.dirname, '..', '..', 'config'), 'hubspot');
const PAT = { name: 'Pat Solo', email: 'pat@solo-prospect.example' };

let stack: BatchStack;
let hs: HubSpotSandbox;
let crm: CrmAdapter;
beforeAll(async () => {
  stack = await startBatchStack();
  hs = await startHubSpotSandbox();
  crm = adapterFor(hs, { retry: { baseDelayMs: 1, maxAttempts: 1 } });
});
afterAll(async () => {
  await stack?.close();
  await hs?.close();
});

describe('a call left writing_back whose contact is merged away before the retry', () => {
  const current = useMigratedDatabase('embedded');

  it('ends skipped on its first retry and is not queued again', async () => {
    const db = current().db.prisma;
    const deps = stack.deps(db, crm, mapping);
    const contact = hs.state.store.create('contacts', {
      email: PAT.email,
      firstname: 'Pat',
      lastname: 'Solo',
    });
    const callId = await stack.analysedCall(PAT);
    // A batch marked it writing_back, then the process died before its CRM write.
    const { record } = await upsertDiscovered(db, { callId, crm: 'hubspot', now: new Date() });
    await moveTo(deps, record, 'writing_back', 'writing to the CRM');
    // Merged away: the email finds no contact now, and no company has its domain.
    hs.state.store.objects.contacts.delete(contact.id);

    const serviceBefore = stack.svc.state.counters.requests;
    let retries = 0;
    // Housekeeping's passes, five minutes apart on its own time (the rows carry real time).
    for (let round = 1; round <= 8; round++) {
      const nowMs = Date.now() + round * (STRANDED_AFTER_MS + 1);
      const stranded = await requeueStrandedCalls(db, { crm: 'hubspot', nowMs });
      if (!stranded.some((c) => c.callId === callId && !c.gaveUp)) break;
      // The queued write-back runs and is done.
      retries++;
      await writeBack(deps, [callId]);
      await db.job.updateMany({
        where: { key: `writeback:${callId}`, state: 'queued' },
        data: { state: 'done' },
      });
    }

    const row = await getSyncStatus(db, callId, 'hubspot');
    expect(row?.state).toBe('skipped');
    expect(retries).toBe(1);
    // One retry's reads (the call and its analysis), not two every five minutes.
    expect(stack.svc.state.counters.requests - serviceBefore).toBeLessThanOrEqual(2);
  });
});
