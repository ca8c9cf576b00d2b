/**
 * End-to-end harness: the sandboxes run in the test process, the worker runs as a real child
 * process (`node bin/crm-sync.js start`) on a fresh data directory. Everything waits on a
 * condition with a deadline, never on a fixed sleep.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { rawConfigSchema } from '../../src/config/schema.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import type { SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import type { ServiceSandbox } from '@crm-sync/sandboxes/service';
import type { StatusSnapshot } from '../../src/ops/status.js';

export type Env = Record<string, string | undefined>;

export const REPO_ROOT = path.join(import.meta.dirname, '..', '..');
const BIN = path.join(REPO_ROOT, 'bin', 'crm-sync.js');

/** A schedule that never fires during a test: only the poll at start runs. */
export const POLL_NEVER = '0 0 0 1 1 *';

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  options: { timeoutMs?: number; intervalMs?: number; describe?: () => unknown } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const detail = options.describe ? `\n${JSON.stringify(await options.describe(), null, 2)}` : '';
      throw new Error(
        `timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}${detail}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 100));
  }
}

/** A port free right now (bound to 0, then released), so a restarted worker can keep it. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const tempDirs: string[] = [];

export function tempDataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'crm-sync-e2e-'));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Worker settings for the Service sandbox plus one CRM sandbox. */
export type WorkerEnv = Env & { PORT: string; DATA_DIR: string };

export function workerEnv(
  svc: ServiceSandbox,
  crm: { kind: 'hubspot'; sandbox: HubSpotSandbox } | { kind: 'salesforce'; sandbox: SalesforceSandbox },
  over: WorkerEnv,
): WorkerEnv {
  const crmEnv: Env =
    crm.kind === 'hubspot'
      ? { CRM: 'hubspot', HUBSPOT_BASE_URL: crm.sandbox.url, HUBSPOT_ACCESS_TOKEN: crm.sandbox.accessToken }
      : {
          CRM: 'salesforce',
          SALESFORCE_INSTANCE_URL: crm.sandbox.url,
          SALESFORCE_LOGIN_URL: crm.sandbox.url,
          SALESFORCE_ACCESS_TOKEN: crm.sandbox.accessToken,
        };
  return {
    SERVICE_API_BASE_URL: svc.url,
    SERVICE_API_KEY: svc.apiKey,
    SERVICE_WEBHOOK_SECRET: svc.webhookSecret,
    // The sandbox's enterprise stand-in (600/min, 50/s), unless a test says otherwise.
    SERVICE_PLAN: 'enterprise',
    SERVICE_RATE_PER_MINUTE: '600',
    SERVICE_BURST_PER_SECOND: '50',
    CONFIG_DIR: path.join(REPO_ROOT, 'config'),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    POLL_SCHEDULE: POLL_NEVER,
    ...crmEnv,
    ...over,
  };
}

/** The process environment without any crm-sync setting, plus exactly `env`. */
function childEnv(env: Env): NodeJS.ProcessEnv {
  const known = new Set(Object.keys(rawConfigSchema.shape));
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !known.has(k)));
  return { ...base, ...env };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface WorkerProcess {
  url: string;
  pid: number;
  env: Env;
  exited: Promise<Exit>;
  /** Everything the process printed so far (for failure messages). */
  output(): string;
  kill(signal: NodeJS.Signals): void;
  /** GET a JSON path of the worker. */
  get<T>(path: string): Promise<T>;
  status(): Promise<StatusSnapshot>;
}

/** The worker's admin token as the CLI sends it, when the test set one. */
export function adminHeaders(env: Env): Record<string, string> {
  return env.ADMIN_TOKEN ? { authorization: `Bearer ${env.ADMIN_TOKEN}` } : {};
}

/** Starts `crm-sync start` as a child process and resolves once GET /readyz answers 200. */
export async function startWorkerProcess(
  env: WorkerEnv,
  timeoutMs = 30_000,
  /** Where to run `bin/crm-sync.js` from: the checkout, or an installed copy (the image test). */
  root = REPO_ROOT,
  /** A command that runs its arguments, e.g. in a memory cgroup (test/image/memoryLimit.ts). */
  launcher: string[] = [],
): Promise<WorkerProcess> {
  const argv = [...launcher, process.execPath, path.join(root, 'bin', 'crm-sync.js'), 'start'];
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), {
    cwd: root,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: string[] = [];
  child.stdout?.on('data', (d: Buffer) => chunks.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => chunks.push(d.toString()));
  let exit: Exit | undefined;
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    }),
  );
  const url = `http://127.0.0.1:${env.PORT}`;
  const get = async <T>(p: string): Promise<T> => {
    const res = await fetch(`${url}${p}`, { headers: adminHeaders(env) });
    if (!res.ok) throw new Error(`GET ${p}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const worker: WorkerProcess = {
    url,
    pid: child.pid!,
    env,
    exited,
    output: () => chunks.join(''),
    kill: (signal) => void child.kill(signal),
    get,
    status: () => get<StatusSnapshot>('/status'),
  };
  try {
    await waitFor(
      'the worker to be ready',
      async () => {
        if (exit) throw new Error(`worker exited early (${JSON.stringify(exit)}):\n${worker.output()}`);
        const res = await fetch(`${url}/readyz`).catch(() => undefined);
        return res?.status === 200;
      },
      { timeoutMs, intervalMs: 50 },
    );
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}\n--- worker output ---\n${worker.output()}`, { cause: err });
  }
  return worker;
}

/** SIGTERM, then waits for the exit (SIGKILL if it takes longer than `timeoutMs`). */
export async function stopWorker(worker: WorkerProcess, timeoutMs = 25_000): Promise<Exit> {
  worker.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), timeoutMs);
  });
  const result = await Promise.race([worker.exited, late]);
  clearTimeout(timer);
  if (result === 'late') {
    worker.kill('SIGKILL');
    throw new Error(`worker did not exit within ${timeoutMs} ms of SIGTERM:\n${worker.output()}`);
  }
  return result;
}

/** Runs `node bin/crm-sync.js ...args` to completion (silent logs unless `logLevel` says otherwise). */
export function runCli(
  args: string[],
  env: Env,
  options: { logLevel?: string; timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: REPO_ROOT,
        env: childEnv({ ...env, LOG_LEVEL: options.logLevel ?? 'silent' }),
        timeout: options.timeoutMs ?? 30_000,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** POST JSON to a sandbox admin route. */
export async function post<T = unknown>(url: string, body: unknown = {}): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export async function getJson<T = unknown>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

export interface Person {
  name: string;
  email: string;
  company?: string;
}

/** Creates a live call on the Service sandbox (emits call.started); returns its id. */
/** A new call in progress, or with `complete` one that no listing ever shows in progress. */
export async function createCall(
  svc: ServiceSandbox,
  participant: Person,
  options: { complete?: boolean } = {},
): Promise<string> {
  const call = await post<{ id: string }>(`${svc.url}/_admin/calls`, { participant, ...options });
  return call.id;
}

export async function completeCall(svc: ServiceSandbox, callId: string): Promise<void> {
  await post(`${svc.url}/_admin/calls/${callId}/complete`);
}

/** The worker's sync row for a call (GET /admin/calls/:id), or undefined when it has none. */
export async function syncState(worker: WorkerProcess, callId: string): Promise<string | undefined> {
  return (await syncRow(worker, callId))?.state as string | undefined;
}

/** The call's sync_status row as `crm-sync status --call --json` shows it. */
export async function syncRow(
  worker: WorkerProcess,
  callId: string,
): Promise<Record<string, unknown> | undefined> {
  const res = await fetch(`${worker.url}/admin/calls/${encodeURIComponent(callId)}`, {
    headers: adminHeaders(worker.env),
  });
  if (res.status === 404) return undefined;
  if (!res.ok) throw new Error(`GET /admin/calls/${callId}: ${res.status}`);
  return ((await res.json()) as { status: Record<string, unknown> }).status;
}

/** Waits until every call is written_back; on timeout the message lists each call's state. */
export async function waitWrittenBack(
  worker: WorkerProcess,
  callIds: string[],
  timeoutMs = 20_000,
): Promise<void> {
  const states = async () =>
    Object.fromEntries(await Promise.all(callIds.map(async (id) => [id, await syncState(worker, id)])));
  await waitFor(
    `${callIds.length} call(s) to be written back`,
    async () => Object.values(await states()).every((s) => s === 'written_back'),
    {
      timeoutMs,
      intervalMs: 200,
      describe: async () => ({ states: await states(), status: await worker.status() }),
    },
  );
}
