/**
 * A write-back batch (runWritebackBatch) with real parts: the Service sandbox through the real
 * client and budget, the CRM sandbox through its adapter, and the database a test hands in. Two
 * databases stand for two workers (one of them fresh) against the same Service and CRM.
 */
import { createRequestBudget } from '../../src/budget/index.js';
import type { CrmAdapter } from '../../src/crm/types.js';
import { silentLogger } from '../../src/log/logger.js';
import type { Mapping } from '../../src/mapping/types.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { PipelineDeps } from '../../src/pipelines/deps.js';
import { createLookupCache } from '../../src/pipelines/lookupCache.js';
import type { WritebackResult } from '../../src/pipelines/types.js';
import { runWritebackBatch } from '../../src/pipelines/writeback.js';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { createServiceClient } from '../../src/service/index.js';
import type { FollowupOptions, ServiceClient } from '../../src/service/types.js';
import type { Db } from '../../src/store/database.js';
import { systemClock } from '../../src/util/clock.js';
import { completeCall, createCall, waitFor, type Person } from '../e2e/harness.js';
import { ROOMY_LIMITS } from '../worker/inProcess.js';

export interface BatchStack {
  svc: ServiceSandbox;
  service: ServiceClient;
  /** Pipeline deps on `db`; `over` swaps parts (a mapping, a Service double). */
  deps(db: Db, crm: CrmAdapter, mapping: Mapping, over?: Partial<PipelineDeps>): PipelineDeps;
  /** A call of `person`, completed and analysed at the Service. */
  analysedCall(person: Person): Promise<string>;
  /** POST /followups requests the Service accepted for the call. */
  generations(callId: string): number;
  close(): Promise<void>;
}

export async function startBatchStack(): Promise<BatchStack> {
  const svc = await startServiceSandbox({ plan: 'enterprise', seedCalls: 0, analysisDelayMs: 0 });
  const budget = createRequestBudget({ limits: ROOMY_LIMITS, clock: systemClock });
  const service = createServiceClient({ baseUrl: svc.url, apiKey: svc.apiKey, budget });
  return {
    svc,
    service,
    deps: (db, crm, mapping, over = {}) => ({
      db,
      crmName: mapping.crm,
      service,
      crm,
      mapping,
      lookups: createLookupCache({ crm, mapping, clock: systemClock }),
      clock: systemClock,
      logger: silentLogger,
      metrics: createMetrics({ defaultMetrics: false }),
      ...over,
    }),
    async analysedCall(person) {
      const id = await createCall(svc, person);
      await completeCall(svc, id);
      await waitFor(`call ${id} analysed`, () => svc.state.getCall(id)?.status === 'analyzed');
      return id;
    },
    generations: (callId) => new Set(svc.state.followups(callId).map((d) => d.created_at)).size,
    async close() {
      await service.close();
      await budget.close();
      await svc.close();
    },
  };
}

/** Runs one write-back batch of `callIds` (as poll jobs); results by call id. */
export async function writeBack(
  deps: PipelineDeps,
  callIds: string[],
): Promise<Map<string, WritebackResult>> {
  const items = callIds.map((callId, i) => ({
    jobId: i + 1,
    payload: { callId, reason: 'poll' as const },
    priority: 'writeback' as const,
  }));
  const results = await runWritebackBatch(deps, items);
  return new Map(callIds.map((callId, i) => [callId, results.get(i + 1)!]));
}

/** The Service client with its follow-up answer replaced (after the claim, as the real one sends). */
export function answering(service: ServiceClient, answer: () => Promise<unknown>): ServiceClient {
  return {
    ...service,
    generateFollowups: (_id: string, _body: unknown, opts?: FollowupOptions) =>
      (opts?.aroundSend ? opts.aroundSend(answer) : answer()) as ReturnType<
        ServiceClient['generateFollowups']
      >,
  };
}
