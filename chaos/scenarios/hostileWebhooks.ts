/**
 * 10,000 requests at /webhooks: signatures missing, wrong, truncated, made with another secret,
 * upper-case hex and `sha256=`-prefixed; bodies over the limit, not JSON, and signed garbage. Each
 * must get the status the README documents (401 unauthenticated, 413 too large, 202 stored,
 * 200 duplicate, 202 "rejected" for authentic garbage), nothing unauthenticated may reach the
 * inbox, and the worker's memory must come back to where it was.
 *
 * Memory is checked the way a leak check must be: a warm-up of the same mix first (JIT code, V8's
 * heap, pools and caches grow once to their working size), then the baseline at rest, the 10,000,
 * and the reading at rest again. "At rest" is after a full GC forced through the worker's inspector
 * and a bounded wait for RSS to stop falling: without the GC the check measured how much garbage V8
 * had not yet collected (up to +60 MB), not what the worker kept. A second flood of 10,000 must add
 * almost nothing (3 % of the baseline): a leak grows with every request, so it shows in both floods,
 * also one too small to cross the 10 % on its own.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { Random } from '@crm-sync/sandboxes/service/rng';
import { SIGNATURE_HEADER } from '../../src/http/webhookRoute.js';
import { createCall } from '../../test/e2e/harness.js';
import { matchingParticipant } from '../../bench/worker/harness.js';
import {
  connectInspector,
  INSPECT_NODE_OPTIONS,
  inspectorUrl,
  type Inspector,
  type MemoryUsage,
} from '../lib/inspector.js';
import { startChaosWorker, type ChaosWorker } from '../lib/processes.js';
import { startStack } from '../lib/stack.js';
import { Verdict, type Scenario, type ScenarioContext } from '../scenario.js';

const REQUESTS = 10_000;
/**
 * Requests of the same mix sent before the baseline: JIT code, V8's heap, the pools and caches
 * grow once to their working size, and that one-time growth is not a leak.
 */
const WARMUP = 500;
/** A second flood after the first: a leak grows again by about as much, a warm-up effect does not. */
const SECOND_FLOOD = 10_000;
const CONCURRENCY = 16;
/** WEBHOOK_MAX_BODY_BYTES's default (README). */
const MAX_BODY_BYTES = 1_048_576;
/** In every body that must not be stored, so the inbox can be searched for it. */
const UNAUTH_MARK = 'chaos-unauthenticated';
const RSS_TOLERANCE = 0.1;
/** How much the second flood may add on top of the first (share of the baseline). */
const SECOND_FLOOD_TOLERANCE = 0.03;
/**
 * CHAOS_HOSTILE_LEAK_BYTES=N makes the worker keep N bytes per request (chaos/fixtures/leak.mjs),
 * to show that the memory check catches a leak. Unset in a normal run.
 */
const LEAK_BYTES = Number(process.env.CHAOS_HOSTILE_LEAK_BYTES ?? 0);
const LEAK_FIXTURE = fileURLToPath(new URL('../fixtures/leak.mjs', import.meta.url));

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

/**
 * The worker's memory at rest: a full GC (so garbage not yet collected does not count), then RSS
 * read every 2 s until it stops falling (at most 60 s), then `process.memoryUsage()` for the
 * breakdown.
 */
async function atRest(pid: number, inspector: Inspector): Promise<MemoryUsage> {
  await inspector.collectGarbage();
  let last = rssBytes(pid);
  for (let i = 0; i < 30; i++) {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const now = rssBytes(pid);
    if (now >= last * 0.99) break;
    last = now;
  }
  return inspector.memoryUsage();
}

const mb = (b: number) => (b / 1048576).toFixed(0);

/** "rss (heap used, external+arrayBuffers)" in MB: where the resident memory is. */
function memoryFigure(m: MemoryUsage): string {
  return `${mb(m.rss)} (heap ${mb(m.heapUsed)}/${mb(m.heapTotal)}, ext ${mb(m.external)})`;
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
  // Closed before the worker stops: Node waits on exit for an attached debugger to leave.
  let inspector: Inspector | undefined;
  try {
    // Webhooks are sent by this scenario only; the one real event is the base of the authentic ones.
    const callId = await createCall(stack.svc, matchingParticipant(0));
    const base = JSON.parse(
      stack.svc.state.events.find((e) => e.event.data.call_id === callId)!.body,
    ) as Record<string, unknown>;
    worker = await startChaosWorker(
      await stack.env({
        LOG_LEVEL: 'info',
        NODE_OPTIONS:
          LEAK_BYTES > 0 ? `${INSPECT_NODE_OPTIONS} --import ${LEAK_FIXTURE}` : INSPECT_NODE_OPTIONS,
        CHAOS_HOSTILE_LEAK_BYTES: String(LEAK_BYTES),
      }),
      {
        dir: ctx.dir,
        label: 'worker',
      },
    );
    const secret = ctx.secrets.suite.webhookSecret;
    const tally = new Map<Kind, { sent: number; wrong: number; statuses: Set<number> }>();
    // The real event once, so every 'duplicate' request after it is one.
    const first = await send(worker.url, makeRequest('duplicate', 0, base, secret, ctx.random));
    verdict.check(first === 202, `the real event was answered ${first}, not 202`);
    inspector = await connectInspector(inspectorUrl(worker.output()));
    const rssStart = rssBytes(worker.pid);
    await flood(worker, WARMUP, base, secret, ctx.random, tally);
    const baseline = await atRest(worker.pid, inspector);
    const started = Date.now();
    for (let q = 0; q < 4; q++) {
      await flood(worker, REQUESTS / 4, base, secret, ctx.random, tally);
      ctx.log(`RSS after ${((q + 1) * REQUESTS) / 4}: ${mb(rssBytes(worker.pid))} MB`);
    }
    const seconds = (Date.now() - started) / 1000;
    // The second flood's answers are checked with the first's (below).
    const afterFlood = await atRest(worker.pid, inspector);
    await flood(worker, SECOND_FLOOD, base, secret, ctx.random, tally);
    const afterSecond = await atRest(worker.pid, inspector);
    verdict.figure('requests', `${WARMUP}+${REQUESTS}+${SECOND_FLOOD}`);
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

    if (LEAK_BYTES > 0) verdict.figure('injected leak', `${LEAK_BYTES} B/request`);
    verdict.figure('RSS start', `${mb(rssStart)} MB`);
    verdict.figure(
      'at rest MB: warm/flood/2nd flood',
      [baseline, afterFlood, afterSecond].map(memoryFigure).join(' / '),
    );
    verdict.check(
      afterFlood.rss <= baseline.rss * (1 + RSS_TOLERANCE),
      `RSS at rest grew from ${mb(baseline.rss)} MB to ${mb(afterFlood.rss)} MB over ${REQUESTS} requests`,
    );
    verdict.check(
      afterSecond.rss - afterFlood.rss <= baseline.rss * SECOND_FLOOD_TOLERANCE,
      `RSS at rest grew again, from ${mb(afterFlood.rss)} MB to ${mb(afterSecond.rss)} MB, over another ${SECOND_FLOOD} requests: a leak`,
    );
    const ready = await fetch(`${worker.url}/readyz`);
    verdict.check(ready.status === 200, `the worker is not ready after the flood (${ready.status})`);
    return verdict.result();
  } finally {
    inspector?.close();
    await worker?.stop();
    await stack.close();
  }
}
