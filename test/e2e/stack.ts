/**
 * The usual end-to-end stack: the Service sandbox on an unlimited plan (no seeded calls, analysis
 * after 50 ms, webhooks to the worker), one CRM sandbox, and the worker as a real process on a
 * fresh embedded database.
 */
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startSalesforceSandbox, type SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import {
  freePort,
  removeTempDirs,
  startWorkerProcess,
  stopWorker,
  tempDataDir,
  workerEnv,
  type WorkerEnv,
  type WorkerProcess,
} from './harness.js';

export interface E2eStack<C> {
  svc: ServiceSandbox;
  crm: C;
  env: WorkerEnv;
  worker: WorkerProcess;
  /** Stops the worker and starts it again on the same database. */
  restartWorker(): Promise<void>;
  close(): Promise<void>;
}

export function startHubSpotStack(): Promise<E2eStack<HubSpotSandbox>> {
  return startStack(startHubSpotSandbox, (sandbox) => ({ kind: 'hubspot', sandbox }));
}

export function startSalesforceStack(): Promise<E2eStack<SalesforceSandbox>> {
  return startStack(startSalesforceSandbox, (sandbox) => ({ kind: 'salesforce', sandbox }));
}

async function startStack<C extends HubSpotSandbox | SalesforceSandbox>(
  startCrm: () => Promise<C>,
  crmOf: (crm: C) => Parameters<typeof workerEnv>[1],
): Promise<E2eStack<C>> {
  const port = await freePort();
  const [svc, crm] = await Promise.all([
    startServiceSandbox({
      plan: 'enterprise',
      seedCalls: 0,
      analysisDelayMs: 50,
      webhookUrl: `http://127.0.0.1:${port}/webhooks`,
    }),
    startCrm(),
  ]);
  const env = workerEnv(svc, crmOf(crm), { PORT: String(port), DATA_DIR: tempDataDir() });
  const worker = await startWorkerProcess(env).catch(async (err: unknown) => {
    await Promise.all([svc.close(), crm.close()]);
    throw err;
  });
  const stack: E2eStack<C> = {
    svc,
    crm,
    env,
    worker,
    async restartWorker() {
      await stopWorker(stack.worker);
      stack.worker = await startWorkerProcess(env);
    },
    async close() {
      await stopWorker(stack.worker).catch(() => undefined);
      await Promise.all([svc.close(), crm.close()]);
      removeTempDirs();
    },
  };
  return stack;
}
