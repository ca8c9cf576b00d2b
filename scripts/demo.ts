/**
 * `npm run demo`: the real worker, as a separate process, against local sandboxes of the Service
 * and a CRM, on the embedded database under ./data/demo. Drives a few live calls from start to
 * analysis and shows what happened: context pushed, sync status, records written to the CRM.
 *
 *   npm run demo                     # HubSpot sandbox
 *   npm run demo -- --crm salesforce # Salesforce sandbox
 *   npm run demo -- --keep           # leave everything running afterwards (Ctrl-C to stop)
 */
// First: on an unsupported Node this prints the version message and exits (the worker would too).
import '../bin/require-node.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startSalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { startServiceSandbox } from '@crm-sync/sandboxes/service';
import { SANDBOX_PARTICIPANTS } from '@crm-sync/sandboxes/service/seed';
import { demoDatabaseNotice, demoEnvironment } from './demoEnv.js';
import {
  contextLines,
  hubspotLandings,
  landingLine,
  salesforceLandings,
  useColor,
  wrap,
  type CallLanding,
  type HubSpotObject,
} from './demoSummary.js';

const root = path.resolve(fileURLToPath(new URL('..', import.meta.url)));
const args = process.argv.slice(2);
const crm = args.includes('--crm') ? args[args.indexOf('--crm') + 1] : 'hubspot';
const keep = args.includes('--keep');
if (crm !== 'hubspot' && crm !== 'salesforce') throw new Error('--crm must be hubspot or salesforce');

const say = (s = '') => console.log(s);
const bold = useColor(process.stdout.isTTY, process.env);
const step = (s: string) => console.log(bold ? `\n\x1b[1m== ${s}\x1b[0m` : `\n== ${s}`);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Polls `check` until it returns a value, or fails after `ms`. */
async function waitFor<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status}`);
  return (await res.json()) as T;
}

step('Starting local sandboxes');
const workerPort = await freePort();
const service = await startServiceSandbox({
  plan: 'sales',
  seedCalls: 8,
  webhookUrl: `http://127.0.0.1:${workerPort}/webhooks`,
  analysisDelayMs: 1500,
});
say(`Service sandbox   ${service.url}  (plan sales: 60/min, 10/s, 10,000/day)`);
const crmEnv: Record<string, string> = {};
let crmUrl: string;
let closeCrm: () => Promise<void>;
if (crm === 'hubspot') {
  const hs = await startHubSpotSandbox();
  crmUrl = hs.url;
  closeCrm = () => hs.close();
  Object.assign(crmEnv, { CRM: 'hubspot', HUBSPOT_BASE_URL: hs.url, HUBSPOT_ACCESS_TOKEN: hs.accessToken });
} else {
  const sf = await startSalesforceSandbox();
  crmUrl = sf.url;
  closeCrm = () => sf.close();
  Object.assign(crmEnv, {
    CRM: 'salesforce',
    SALESFORCE_INSTANCE_URL: sf.url,
    SALESFORCE_ACCESS_TOKEN: sf.accessToken,
  });
}
say(
  `${crm === 'hubspot' ? 'HubSpot' : 'Salesforce'} sandbox ${' '.repeat(crm === 'hubspot' ? 3 : 0)}${crmUrl}`,
);

const dataDir = path.join(root, 'data', 'demo');
rmSync(dataDir, { recursive: true, force: true });
// None of the admin's settings reach the worker (a configured DATABASE_URL may be production's).
// It listens on loopback only, where no admin token is needed.
const { env, ignored } = demoEnvironment(process.env, root, dataDir, {
  ...crmEnv,
  SERVICE_API_BASE_URL: service.url,
  SERVICE_API_KEY: service.apiKey,
  SERVICE_WEBHOOK_SECRET: service.webhookSecret,
  SERVICE_PLAN: 'sales',
  PORT: String(workerPort),
  HOST: '127.0.0.1',
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
});

step('Starting the worker: crm-sync start');
say(demoDatabaseNotice('./data/demo', ignored));
const worker: ChildProcess = spawn(process.execPath, [path.join(root, 'bin/crm-sync.js'), 'start'], {
  env,
  stdio: ['ignore', 'inherit', 'inherit'],
});
// Settles when the worker has exited, however early: a worker that stops (a bad setting, an old
// Node) ends the demo at once instead of after the readiness wait.
const workerExit = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
const workerUrl = `http://127.0.0.1:${workerPort}`;
let exitCode = 0;
try {
  await Promise.race([
    waitFor('the worker to be ready', 60_000, async () =>
      (await fetch(`${workerUrl}/readyz`)).ok ? true : undefined,
    ),
    workerExit.then((code) => {
      throw new Error(`the worker exited (code ${code}) before it was ready`);
    }),
  ]);
  say(`worker ready at ${workerUrl} (GET /status, /metrics, /readyz)`);

  const participants = [SANDBOX_PARTICIPANTS[0]!, SANDBOX_PARTICIPANTS[2]!, SANDBOX_PARTICIPANTS[4]!];
  const callIds: string[] = [];
  for (const p of participants) {
    step(`Live call with ${p.name} <${p.email}>`);
    const call = await json<{ id: string }>(`${service.url}/_admin/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ participant: p }),
    });
    callIds.push(call.id);
    const started = Date.now();
    say(`call.started -> ${call.id}`);
    const contexts = await waitFor('the context push', 15_000, async () => {
      const list = await json<{ body?: unknown }[]>(`${service.url}/_admin/contexts/${call.id}`);
      return list.length > 0 ? list : undefined;
    });
    const body = (contexts[0] as { body?: Record<string, unknown> }).body ?? contexts[0];
    say(`context pushed after ${Date.now() - started} ms:`);
    for (const line of contextLines(body as Parameters<typeof contextLines>[0])) say(line);
    await json(`${service.url}/_admin/calls/${call.id}/complete`, { method: 'POST' });
    say('call.completed; analysis follows shortly (analysis.ready)');
  }

  step('Waiting for the write-back of the three calls');
  const outcomes = await waitFor('all calls to settle', 60_000, async () => {
    const s = await json<{ calls: Record<string, number> }>(`${workerUrl}/status`);
    const settled = (s.calls.written_back ?? 0) + (s.calls.skipped ?? 0) + (s.calls.failed ?? 0);
    const states = await Promise.all(
      callIds.map(async (id) => {
        const r = await fetch(`${workerUrl}/admin/calls/${id}`);
        if (!r.ok) return { state: 'unknown', reason: null };
        const { status, history } = (await r.json()) as {
          status: { state: string; lastErrorMessage: string | null };
          history: { toState: string; detail: string | null }[];
        };
        // Why it is in this state: the error, else the detail of the move into it (a skip's reason).
        const into = history.filter((e) => e.toState === status.state).at(-1);
        return { state: status.state, reason: status.lastErrorMessage ?? into?.detail ?? null };
      }),
    );
    return states.every((st) => ['written_back', 'skipped', 'failed'].includes(st.state)) && settled > 0
      ? states
      : undefined;
  });

  step('crm-sync status');
  await new Promise<void>((resolve) => {
    const p = spawn(process.execPath, [path.join(root, 'bin/crm-sync.js'), 'status'], {
      env,
      stdio: 'inherit',
    });
    p.on('exit', () => resolve());
  });
  for (const id of callIds) {
    step(`crm-sync status --call ${id}`);
    await new Promise<void>((resolve) => {
      const p = spawn(process.execPath, [path.join(root, 'bin/crm-sync.js'), 'status', '--call', id], {
        env,
        stdio: 'inherit',
      });
      p.on('exit', () => resolve());
    });
  }

  step(`Where each call landed in the ${crm === 'hubspot' ? 'HubSpot' : 'Salesforce'} sandbox`);
  const landings =
    crm === 'hubspot' ? await hubspotLanded(crmUrl, callIds) : await salesforceLanded(crmUrl, callIds);
  for (const [i, l] of landings.entries()) {
    const o = outcomes[i]!;
    for (const line of wrap(landingLine(l, o.reason ? `${o.state}: ${o.reason}` : o.state), 2)) say(line);
  }
  say(
    '\nDone. The same worker runs in production with DATABASE_URL, real API URLs and credentials (see README).',
  );
  if (keep) {
    say(
      `\nStill running (--keep): worker ${workerUrl}, Service ${service.url}, CRM ${crmUrl}. Ctrl-C to stop.`,
    );
    await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  }
} catch (err) {
  console.error(`demo failed: ${(err as Error).message}`);
  exitCode = 1;
} finally {
  worker.kill('SIGTERM');
  await workerExit;
  await service.close();
  await closeCrm();
}
process.exit(exitCode);

/** Reads back the HubSpot sandbox's calls, notes and the records they are associated with. */
async function hubspotLanded(url: string, ids: string[]): Promise<CallLanding[]> {
  const objects = async (type: string) =>
    (await json<{ results: HubSpotObject[] }>(`${url}/_admin/objects/${type}`)).results;
  const [calls, notes, contacts, companies, deals] = await Promise.all(
    ['calls', 'notes', 'contacts', 'companies', 'deals'].map(objects),
  );
  const { results: associations } = await json<{
    results: { fromType: string; fromId: string; toType: string; toId: string }[];
  }>(`${url}/_admin/associations?fromType=calls`);
  return hubspotLandings(ids, {
    calls: calls!,
    notes: notes!,
    contacts: contacts!,
    companies: companies!,
    deals: deals!,
    associations,
  });
}

/** Reads back the Salesforce sandbox's Tasks, draft EmailMessages and the records they name. */
async function salesforceLanded(url: string, ids: string[]): Promise<CallLanding[]> {
  const records = async (type: string) => {
    const r = await json<{ records?: Record<string, unknown>[] } | Record<string, unknown>[]>(
      `${url}/_admin/records/${type}`,
    );
    return Array.isArray(r) ? r : (r.records ?? []);
  };
  const [Task, EmailMessage, Contact, Lead, Account, Opportunity] = await Promise.all(
    ['Task', 'EmailMessage', 'Contact', 'Lead', 'Account', 'Opportunity'].map(records),
  );
  return salesforceLandings(ids, {
    Task: Task!,
    EmailMessage: EmailMessage!,
    Contact: Contact!,
    Lead: Lead!,
    Account: Account!,
    Opportunity: Opportunity!,
  });
}
