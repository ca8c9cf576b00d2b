/**
 * Follow-up generation under Service failures, through the real worker against the Service and
 * HubSpot sandboxes on a fake clock. A shim in front of the Service sandbox scripts the answers to
 * POST /followups; everything else passes through. A failure that proves the Service did nothing
 * (503) is asked again until drafts come; an ambiguous one (the Service made the drafts, then the
 * answer was a 500) is not asked again: the call is written with a FOLLOWUP_UNCERTAIN warning and
 * the drafts that followup.generated brings are attached to its activity.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import { FakeClock } from '../../src/util/fakeClock.js';
import { completeCall, createCall } from '../e2e/harness.js';
import { noteDraftId } from '../e2e/readback.js';
import {
  adminPost,
  ROOMY_LIMITS,
  startInProcessWorker,
  tickUntil,
  type InProcessWorker,
} from './inProcess.js';

type Scripted = '503' | 'act-then-500' | '500-unsent';

/** Passes requests to `target`; the next POST .../followups gets the next scripted answer. */
async function startFollowupShim(target: string) {
  const script: Scripted[] = [];
  /** POST .../followups that reached the Service: each one made a set of drafts. */
  const generations = new Map<string, number>();
  /** POST .../followups the shim received, answered or not. */
  const asked = new Map<string, number>();
  const forward = async (req: IncomingMessage, body: Buffer) => {
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
    ) as Record<string, string>;
    return fetch(`${target}${req.url ?? '/'}`, {
      method: req.method ?? 'GET',
      headers,
      body: body.length > 0 ? new Uint8Array(body) : undefined,
    });
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const step = req.method === 'POST' && req.url?.endsWith('/followups') ? script.shift() : undefined;
    if (req.method === 'POST' && req.url?.endsWith('/followups')) {
      const callId = req.url.split('/')[3] ?? '';
      asked.set(callId, (asked.get(callId) ?? 0) + 1);
    }
    if (step === '500-unsent') {
      // A 500 the Service answered without making drafts; the client cannot tell it from one that did.
      res.writeHead(500).end();
      return;
    }
    if (step === '503') {
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'unavailable', message: 'try later' } }));
      return;
    }
    if (req.method === 'POST' && req.url?.endsWith('/followups')) {
      const callId = req.url.split('/')[3] ?? '';
      generations.set(callId, (generations.get(callId) ?? 0) + 1);
    }
    const answer = await forward(req, body);
    const text = await answer.text();
    if (step === 'act-then-500') {
      res.writeHead(500).end();
      return;
    }
    const passed: Record<string, string> = {};
    for (const name of ['content-type', 'retry-after', 'location']) {
      const value = answer.headers.get(name);
      if (value !== null) passed[name] = value;
    }
    res.writeHead(answer.status, passed);
    res.end(text);
  };
  const server: Server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    script,
    generations,
    asked,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const JANE = { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' };

let clock: FakeClock;
let svc: ServiceSandbox;
let hs: HubSpotSandbox;
let shim: Awaited<ReturnType<typeof startFollowupShim>>;
let worker: InProcessWorker;

beforeAll(async () => {
  clock = new FakeClock();
  [svc, hs] = await Promise.all([
    startServiceSandbox({ clock, seedCalls: 0, limits: ROOMY_LIMITS, analysisDelayMs: 1_000 }),
    startHubSpotSandbox({ clock, limits: { perWindow: 10_000 } }),
  ]);
  shim = await startFollowupShim(svc.url);
  worker = await startInProcessWorker(clock, svc, hs, { SERVICE_API_BASE_URL: shim.url });
  await adminPost(`${svc.url}/_admin/config`, { webhookUrl: `${worker.handle.url}/webhooks` });
});

afterAll(async () => {
  await worker?.close();
  await shim?.close();
  await Promise.all([svc?.close(), hs?.close()]);
});

interface Row {
  state: string;
  warnings: string[];
  crmFollowupIds: string[];
}

async function row(callId: string): Promise<Row | undefined> {
  const res = await worker.get<{ status: Row }>(`/admin/calls/${callId}`);
  return res.status === 404 ? undefined : res.body.status;
}

async function syncCall(
  script: Scripted[],
  done: (r: Row, drafts: number) => boolean,
): Promise<{ id: string; row: Row }> {
  shim.script.splice(0, shim.script.length, ...script);
  const id = await createCall(svc, JANE);
  await completeCall(svc, id);
  await tickUntil(
    clock,
    `call ${id} to be written with its drafts`,
    async () => {
      const r = await row(id);
      return r !== undefined && done(r, svc.state.followups(id).length);
    },
    { stepMs: 2_000, describe: () => row(id) },
  );
  return { id, row: (await row(id))! };
}

describe('follow-up generation when the Service fails', { timeout: 120_000 }, () => {
  it('asks again after 503s, past the client retries and a job retry, and attaches the one set of drafts', async () => {
    // Six 503s: the client's five attempts, then the job's retry asks again.
    const { id, row: r } = await syncCall(
      ['503', '503', '503', '503', '503', '503'],
      (r, drafts) => r.state === 'written_back' && drafts > 0 && r.crmFollowupIds.length === drafts,
    );
    expect(shim.script).toEqual([]);
    expect(r.warnings.filter((w) => w.startsWith('FOLLOWUP_UNCERTAIN'))).toEqual([]);
    expect(shim.generations.get(id)).toBe(1);
  });

  it('after an ambiguous 500 does not ask again, warns, and attaches the drafts followup.generated brings', async () => {
    const { id, row: r } = await syncCall(
      ['act-then-500'],
      (r, drafts) => r.state === 'written_back' && drafts > 0 && r.crmFollowupIds.length === drafts,
    );
    expect(r.warnings.some((w) => w.startsWith('FOLLOWUP_UNCERTAIN: '))).toBe(true);
    expect(shim.generations.get(id)).toBe(1);
    // The drafts in HubSpot are the ones the Service made on that one request.
    const generated = svc.state.followups(id);
    const notes = [...hs.state.store.objects.notes.values()].filter(
      (n) => n.properties.crmsync_call_id === id && n.properties.crmsync_followup_id,
    );
    expect(notes.map(noteDraftId).sort()).toEqual(generated.map((d) => d.id).sort());
  });

  it('is not asked again by a replay after an uncertain request; only --regenerate-followups asks', async () => {
    const { id, row: first } = await syncCall(['500-unsent'], (r) => r.state === 'written_back');
    expect(first.warnings.some((w) => w.startsWith('FOLLOWUP_UNCERTAIN: '))).toBe(true);
    expect(first.crmFollowupIds).toEqual([]);
    expect(shim.asked.get(id)).toBe(1);

    // What `crm-sync replay --call` sends the running worker, without and then with the flag.
    const replayed = async (body: Record<string, unknown>) => {
      await adminPost(`${worker.handle.url}/admin/replay`, { callId: id, ...body });
      await tickUntil(
        clock,
        `call ${id} written again`,
        async () => (await row(id))?.state === 'written_back',
        {
          stepMs: 2_000,
          describe: () => row(id),
        },
      );
      return (await row(id))!;
    };
    await replayed({});
    expect(shim.asked.get(id)).toBe(1);
    const again = await replayed({ regenerateFollowups: true });
    expect(shim.asked.get(id)).toBe(2);
    expect(shim.generations.get(id)).toBe(1);
    expect(again.crmFollowupIds).toHaveLength(svc.state.followups(id).length);
    expect(again.crmFollowupIds.length).toBeGreaterThan(0);
  });
});
