/**
 * The Docker image's runtime stage, without Docker: the Dockerfile's own COPY and RUN steps are
 * replayed in a temp dir (same install, build and prune commands), the runtime file set is
 * measured, and `node bin/crm-sync.js start` runs from it against the sandboxes until a call is
 * written back. A runtime dependency pruned away, or a file the runtime stage forgets to copy,
 * makes the worker fail to start or to write back, and this test with it.
 */
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '../../src/sandbox/hubspot/index.js';
import { startServiceSandbox, type ServiceSandbox } from '../../src/sandbox/service/index.js';
import {
  completeCall,
  createCall,
  freePort,
  REPO_ROOT,
  startWorkerProcess,
  stopWorker,
  waitWrittenBack,
  workerEnv,
  type WorkerProcess,
} from '../e2e/harness.js';
import { hubspotActivityCounts } from '../e2e/readback.js';
import { directoryBytes, replayDockerfile, type ReplayResult } from './dockerfile.js';

/** The runtime file set must stay under this (the target; it was 538 MB of node_modules). */
const MAX_RUNTIME_MB = 200;

describe('the Docker runtime stage', () => {
  let workDir: string;
  let replay: ReplayResult;
  let runtime: string;
  let svc: ServiceSandbox | undefined;
  let hs: HubSpotSandbox | undefined;
  let worker: WorkerProcess | undefined;
  const steps: string[] = [];

  beforeAll(() => {
    workDir = mkdtempSync(path.join(tmpdir(), 'crm-sync-image-'));
    replay = replayDockerfile(REPO_ROOT, workDir, (step) => steps.push(step));
    runtime = replay.stageDirs.get('runtime')!;
  }, 600_000);

  afterAll(async () => {
    if (worker) await stopWorker(worker).catch(() => undefined);
    await Promise.all([svc?.close(), hs?.close()]);
    rmSync(workDir, { recursive: true, force: true });
  }, 300_000);

  it(`holds production files only, under ${MAX_RUNTIME_MB} MB`, async ({ annotate }) => {
    const mb = directoryBytes(runtime) / 1e6;
    const nodeModulesMb = directoryBytes(path.join(runtime, 'node_modules')) / 1e6;
    await annotate(
      `runtime stage file set: ${mb.toFixed(1)} MB (node_modules ${nodeModulesMb.toFixed(1)} MB)`,
    );
    console.warn(`runtime stage file set: ${mb.toFixed(1)} MB (node_modules ${nodeModulesMb.toFixed(1)} MB)`);
    expect(mb).toBeLessThan(MAX_RUNTIME_MB);
    for (const devOnly of [
      'node_modules/typescript',
      'node_modules/prisma',
      'node_modules/@prisma/internals',
      'node_modules/tsx',
      'node_modules/vitest',
      'dist/sandbox',
      'src',
      'test',
      'config/crm-sync.yaml',
    ]) {
      expect(existsSync(path.join(runtime, devOnly)), devOnly).toBe(false);
    }
    for (const needed of [
      'dist/cli/main.js',
      'bin/crm-sync.js',
      'prisma/migrations',
      'config/mappings/hubspot.yaml',
    ])
      expect(existsSync(path.join(runtime, needed)), needed).toBe(true);
    expect(replay.command).toEqual(['node', 'bin/crm-sync.js', 'start']);
    expect(replay.env.NODE_ENV).toBe('production');
  });

  it('starts the worker from the runtime files: /readyz answers 200 and a call is written back', async () => {
    const port = await freePort();
    [svc, hs] = await Promise.all([
      startServiceSandbox({
        plan: 'enterprise',
        seedCalls: 0,
        analysisDelayMs: 50,
        webhookUrl: `http://127.0.0.1:${port}/webhooks`,
      }),
      startHubSpotSandbox(),
    ]);
    const dataDir = path.join(workDir, 'data');
    const env = workerEnv(
      svc,
      { kind: 'hubspot', sandbox: hs },
      { ...replay.env, CONFIG_DIR: path.join(runtime, 'config'), DATA_DIR: dataDir, PORT: String(port) },
    );
    // startWorkerProcess resolves only once GET /readyz has answered 200.
    worker = await startWorkerProcess(env, 60_000, runtime);
    const callId = await createCall(svc, {
      name: 'Jane Doe',
      email: 'jane.doe@acme.example',
      company: 'Acme Corp',
    });
    await completeCall(svc, callId);
    await waitWrittenBack(worker, [callId], 30_000);
    expect(hubspotActivityCounts(hs, [callId])).toEqual({ [callId]: 1 });
    expect(worker.output()).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find (module|package)/);
    await stopWorker(worker);
    worker = undefined;
  }, 120_000);

  it('would notice a runtime dependency pruned away: the worker then fails to start', async () => {
    // The control for the test above: the same start, with one production dependency removed.
    renameSync(path.join(runtime, 'node_modules', 'jsonata'), path.join(workDir, 'jsonata-aside'));
    const env = workerEnv(
      svc!,
      { kind: 'hubspot', sandbox: hs! },
      {
        ...replay.env,
        CONFIG_DIR: path.join(runtime, 'config'),
        DATA_DIR: path.join(workDir, 'data-control'),
        PORT: String(await freePort()),
      },
    );
    await expect(startWorkerProcess(env, 60_000, runtime)).rejects.toThrow(
      /worker exited early[\s\S]*jsonata/,
    );
  }, 120_000);
});
