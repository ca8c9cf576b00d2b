/**
 * 10,000 requests at /webhooks: signatures missing, wrong, truncated, made with another secret,
 * upper-case hex and `sha256=`-prefixed; bodies over the limit, not JSON, and signed garbage. Each
 * must get the status the README documents (401 unauthenticated, 413 too large, 202 stored,
 * 200 duplicate, 202 "rejected" for authentic garbage), nothing unauthenticated may reach the
 * inbox, and the worker's memory must come back to where it was.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import type { Random } from '../../src/sandbox/service/rng.js';
import { SIGNATURE_HEADER } from '../../src/http/webhookRoute.js';
import { createCall, waitFor } from '../../test/e2e/harness.js';
import { matchingParticipant } from '../../bench/worker/harness.js';
import { startChaosWorker, type ChaosWorker } from '../lib/processes.js';
import { startStack } from '../lib/stack.js';
import { Verdict, type Scenario, type ScenarioContext } from '../scenario.js';

const REQUESTS = 10_000;
/**
 * Requests of the same mix before the baseline is taken. V8 sizes its heap for the traffic it sees
 * and keeps the pages: measured here, the first ~5,000 requests raise RSS once by 100-150 MB and
 * it then stays flat (within 1 %) however many follow; a leak would grow on after that.
 */
const WARMUP = 5_000;
const CONCURRENCY = 16;
/** WEBHOOK_MAX_BODY_BYTES's default (README). */
const MAX_BODY_BYTES = 1_048_576;
/** In every body that must not be stored, so the inbox can be searched for it. */
const UNAUTH_MARK = 'chaos-unauthenticated';
const RSS_TOLERANCE = 0.1;

type Kind =
  | 'missing'
  | 'wrong'
  | 'truncated'
  | 'wrong-secret'
  | 'upper-case-hex'
  | 'sha256-prefix'
  | 'oversized'
  | 'non-json'
  | 'signed-garbage'
  | 'duplicate';

/** Kinds with their share of the requests and the statuses the README documents for them. */
const KINDS: { kind: Kind; weight: number; statuses: number[] }[] = [
  { kind: 'missing', weight: 12, statuses: [401] },
  { kind: 'wrong', weight: 12, statuses: [401] },
  { kind: 'truncated', weight: 12, statuses: [401] },
  { kind: 'wrong-secret', weight: 12, statuses: [401] },
  { kind: 'upper-case-hex', weight: 10, statuses: [202] },
  { kind: 'sha256-prefix', weight: 10, statuses: [202] },
  { kind: 'oversized', weight: 2, statuses: [413] },
  { kind: 'non-json', weight: 12, statuses: [401] },
  { kind: 'signed-garbage', weight: 8, statuses: [202] },
  { kind: 'duplicate', weight: 10, statuses: [200] },
];

export const hostileWebhooksScenario: Scenario = {
  name: 'hostile-webhooks',
  description: `${REQUESTS} forged, malformed and oversized webhooks: documented statuses, nothing unauthenticated stored, RSS back within 10 %`,
  budgetMs: 200_000,
  run: runHostile,
};

interface Request {
  kind: Kind;
  body: Buffer;
  signature: string | undefined;
  contentType: string;
}

function hmac(body: Buffer, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/** Builds the n-th request of `kind` from a real event the Service emitted. */
function makeRequest(
  kind: Kind,
  n: number,
  base: Record<string, unknown>,
  secret: string,
  random: Random,
): Request {
  const event = (id: string, type = 'transcript.ready') => Buffer.from(JSON.stringify({ ...base, id, type }));
  const forged = event(`evt_${UNAUTH_MARK}_${n}`);
  const authentic = event(`evt_chaos_${n}_${randomBytes(4).toString('hex')}`);
  const json = 'application/json';
  switch (kind) {
    case 'missing':
      return { kind, body: forged, signature: undefined, contentType: json };
    case 'wrong':
      return { kind, body: forged, signature: randomBytes(32).toString('hex'), contentType: json };
    case 'truncated':
      return {
        kind,
        body: forged,
        signature: hmac(forged, secret).slice(0, 1 + Math.floor(random() * 63)),
        contentType: json,
      };
    case 'wrong-secret':
      return { kind, body: forged, signature: hmac(forged, `${secret}-not`), contentType: json };
    case 'upper-case-hex':
      return { kind, body: authentic, signature: hmac(authentic, secret).toUpperCase(), contentType: json };
    case 'sha256-prefix':
      return { kind, body: authentic, signature: `sha256=${hmac(authentic, secret)}`, contentType: json };
    case 'oversized': {
      const body = Buffer.concat([
        Buffer.from(`{"pad":"${UNAUTH_MARK}`),
        Buffer.alloc(MAX_BODY_BYTES, 'x'),
        Buffer.from('"}'),
      ]);
      return { kind, body, signature: hmac(body, secret), contentType: json };
    }
    case 'non-json': {
      const body = Buffer.concat([Buffer.from(UNAUTH_MARK), randomBytes(64 + Math.floor(random() * 2000))]);
      return { kind, body, signature: randomBytes(32).toString('hex'), contentType: 'text/plain' };
    }
    case 'signed-garbage': {
      const body = Buffer.concat([
        Buffer.from('chaos-signed-garbage'),
        randomBytes(64 + Math.floor(random() * 2000)),
      ]);
      return { kind, body, signature: hmac(body, secret), contentType: 'application/octet-stream' };
    }
    case 'duplicate': {
      const body = Buffer.from(JSON.stringify(base));
      return { kind, body, signature: hmac(body, secret), contentType: json };
    }
  }
}

function pickKind(random: Random): (typeof KINDS)[number] {
  const total = KINDS.reduce((a, k) => a + k.weight, 0);
  let roll = random() * total;
  for (const k of KINDS) {
    roll -= k.weight;
    if (roll < 0) return k;
  }
  return KINDS[0]!;
}

/** Resident memory of a process, from /proc (Linux). */
function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

/** RSS once it has stopped falling (at most 60 s), read every 2 s. */
async function settledRss(pid: number): Promise<number> {
  let last = rssBytes(pid);
  for (let i = 0; i < 30; i++) {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const now = rssBytes(pid);
    if (now >= last * 0.99) return now;
    last = now;
  }
  return last;
}

/** The worker's own view of its memory (prom-client's default metrics), in MB: used/total/external. */
async function heapFigures(worker: ChaosWorker): Promise<string> {
  const text = await (await fetch(`${worker.url}/metrics`)).text();
  const metric = (name: string) => {
    const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    return match ? (Number(match[1]) / 1048576).toFixed(0) : '?';
  };
  return ['nodejs_heap_size_used_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_external_memory_bytes']
    .map(metric)
    .join('/');
}

async function send(url: string, r: Request): Promise<number> {
  const headers: Record<string, string> = { 'content-type': r.contentType };
  if (r.signature !== undefined) headers[SIGNATURE_HEADER] = r.signature;
  try {
    const res = await fetch(`${url}/webhooks`, {
      method: 'POST',
      headers,
      body: new Uint8Array(r.body),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    // No answer at all (a reset connection): never a documented status.
    return -1;
  }
}

/** Sends `count` requests, `CONCURRENCY` at a time; returns the unexpected answers per kind. */
async function flood(
  worker: ChaosWorker,
  count: number,
  base: Record<string, unknown>,
  secret: string,
  random: Random,
  tally: Map<Kind, { sent: number; wrong: number; statuses: Set<number> }>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const n = next++;
      const spec = pickKind(random);
      const status = await send(worker.url, makeRequest(spec.kind, n, base, secret, random));
      const t = tally.get(spec.kind) ?? { sent: 0, wrong: 0, statuses: new Set<number>() };
      t.sent++;
      t.statuses.add(status);
      if (!spec.statuses.includes(status)) t.wrong++;
      tally.set(spec.kind, t);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
}

async function runHostile(ctx: ScenarioContext) {
  const verdict = new Verdict();
  const stack = await startStack(ctx, { database: 'postgres', plan: 'team' });
  let worker: ChaosWorker | undefined;
  try {
    // Webhooks are sent by this scenario only; the one real event is the base of the authentic ones.
    const callId = await createCall(stack.svc, matchingParticipant(0));
    const base = JSON.parse(
      stack.svc.state.events.find((e) => e.event.data.call_id === callId)!.body,
    ) as Record<string, unknown>;
    worker = await startChaosWorker(await stack.env({ LOG_LEVEL: 'info' }), {
      dir: ctx.dir,
      label: 'worker',
    });
    const secret = ctx.secrets.suite.webhookSecret;
    const tally = new Map<Kind, { sent: number; wrong: number; statuses: Set<number> }>();
    // The real event once, so every 'duplicate' request after it is one.
    const first = await send(worker.url, makeRequest('duplicate', 0, base, secret, ctx.random));
    verdict.check(first === 202, `the real event was answered ${first}, not 202`);
    const rssStart = rssBytes(worker.pid);
    await flood(worker, WARMUP, base, secret, ctx.random, tally);
    // Taken at rest, like the reading after the flood: V8 returns pages when the process idles.
    const rssBefore = await settledRss(worker.pid);
    const heapBefore = await heapFigures(worker);
    const started = Date.now();
    for (let q = 0; q < 4; q++) {
      await flood(worker, REQUESTS / 4, base, secret, ctx.random, tally);
      ctx.log(`RSS after ${((q + 1) * REQUESTS) / 4}: ${(rssBytes(worker.pid) / 1048576).toFixed(0)} MB`);
    }
    const seconds = (Date.now() - started) / 1000;
    verdict.figure('requests', WARMUP + REQUESTS);
    verdict.figure('req/s', Math.round(REQUESTS / seconds));
    for (const [kind, t] of tally) {
      verdict.check(
        t.wrong === 0,
        `${kind}: ${t.wrong}/${t.sent} answered other than documented (saw ${[...t.statuses].join(', ')})`,
      );
    }
    verdict.figure(
      'wrong statuses',
      [...tally.values()].reduce((a, t) => a + t.wrong, 0),
    );

    const client = new pg.Client({ connectionString: stack.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ unauth: string; unsigned: string; authentic: string }>(
        `SELECT count(*) FILTER (WHERE raw_body LIKE $1) AS unauth,
                count(*) FILTER (WHERE NOT signature_ok) AS unsigned,
                count(*) FILTER (WHERE raw_body LIKE '%evt_chaos_%' OR raw_body LIKE 'chaos-signed-garbage%') AS authentic
           FROM webhook_inbox`,
        [`%${UNAUTH_MARK}%`],
      );
      const row = rows[0]!;
      verdict.figure('unauth stored', Number(row.unauth) + Number(row.unsigned));
      verdict.figure('authentic stored', Number(row.authentic));
      verdict.check(
        Number(row.unauth) === 0 && Number(row.unsigned) === 0,
        `unauthenticated requests stored: ${JSON.stringify(row)}`,
      );
      verdict.check(
        Number(row.authentic) > 0,
        'no authentic request was stored (the inbox query finds nothing)',
      );
    } finally {
      await client.end();
    }

    // Memory settles after the flood: a bounded wait for RSS to come back within 10 %.
    let rssAfter = rssBytes(worker.pid);
    await waitFor(
      'RSS to settle',
      () => {
        rssAfter = rssBytes(worker!.pid);
        return rssAfter <= rssBefore * (1 + RSS_TOLERANCE);
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    ).catch(() => undefined);
    const mb = (b: number) => `${(b / 1048576).toFixed(0)} MB`;
    verdict.figure('heap used/total/external MB', `${heapBefore} -> ${await heapFigures(worker)}`);
    verdict.figure('RSS start/warm/end', `${mb(rssStart)}/${mb(rssBefore)}/${mb(rssAfter)}`);
    verdict.check(
      rssAfter <= rssBefore * (1 + RSS_TOLERANCE),
      `RSS grew from ${mb(rssBefore)} to ${mb(rssAfter)}`,
    );
    const ready = await fetch(`${worker.url}/readyz`);
    verdict.check(ready.status === 200, `the worker is not ready after the flood (${ready.status})`);
    return verdict.result();
  } finally {
    await worker?.stop();
    await stack.close();
  }
}
