/**
 * Request-budget benchmark: saturates the gate with backfill reads while live requests arrive
 * every 2-5 s, against the Service sandbox (in-process) or any Service, and reports 429s,
 * utilisation of the plan's limits and how long live requests waited for a slot.
 *
 *   npm run bench:budget -- [--seconds 60] [--plan team] [--rate 600 --burst 50]
 *                           [--reserves 0,1,2] [--unpaced-reserves 1] [--margin 5]
 *                           [--limiters p-queue/min,p-queue/s,bottleneck]
 *                           [--base-url URL --api-key KEY]
 *
 * Each plan also runs the limiters a team would otherwise configure (bench/limiters.ts), in the
 * same run against the same sandbox: their utilisation and 429s sit next to ours.
 *
 * Without --plan it runs `team` and a custom 600/min, 50/s plan. With --base-url it talks to that
 * Service (counters come from /_admin/counters when it has them); windows already used by other
 * clients of that key are not known, so utilisation there is a lower bound.
 */
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { createRequestBudget } from '../src/budget/budget.js';
import { BudgetClosedError } from '../src/budget/errors.js';
import { PLAN_NAMES, resolvePlan, type PlanLimits, type PlanName } from '../src/budget/plans.js';
import type { Priority, RequestBudget } from '../src/budget/types.js';
import { maxStartsInSpan } from '../src/budget/window.js';
import { startServiceSandbox } from '@crm-sync/sandboxes/service';
import { createServiceClient } from '../src/service/client.js';
import { ServiceDailyCapError, ServiceRateLimitedError } from '../src/service/errors.js';
import { systemClock } from '../src/util/clock.js';
import { formatTable } from '../src/util/table.js';
import { createLimiterBudget, LIMITER_NAMES, type LimiterName } from './limiters.js';

interface Plan {
  name: string;
  limits: PlanLimits;
}

interface RunConfig {
  plan: Plan;
  /** crm-sync's budget, or a limiter from npm configured as a team would. */
  limiter: 'crm-sync' | LimiterName;
  reserve: number;
  pace: boolean;
}

interface Target {
  baseUrl: string;
  apiKey: string;
  close(): Promise<void>;
}

interface Counters {
  accepted: number;
  rejected429: number;
  maxInAnySecond: number;
  maxInAnyMinute: number;
}

interface RunResult {
  config: RunConfig;
  sent: number;
  client429: number;
  counters: Counters | null;
  mostAllowed: number;
  liveWaits: number[];
  /** Live requests still waiting when the run ended (their wait so far is in liveWaits). */
  liveCut: number;
}

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    plan: { type: 'string' },
    rate: { type: 'string' },
    burst: { type: 'string' },
    reserves: { type: 'string', default: '0,1,2' },
    'unpaced-reserves': { type: 'string', default: '1' },
    limiters: { type: 'string', default: LIMITER_NAMES.join(',') },
    margin: { type: 'string' },
    'base-url': { type: 'string' },
    'api-key': { type: 'string' },
    seed: { type: 'string', default: '7' },
  },
});

const seconds = Number(args.seconds);
const marginMs = args.margin === undefined ? undefined : Number(args.margin);
/** Backfill requests kept waiting at all times, so the gate is always saturated. */
const BACKFILL_DEPTH = 24;
/** No live request is issued this close to the end, so live waits below it are never cut short. */
const LIVE_QUIET_END_MS = 1500;

function numberList(text: string): number[] {
  return text
    .split(',')
    .filter((s) => s.trim() !== '')
    .map(Number);
}

function plansToRun(): Plan[] {
  const overrides = {
    ratePerMinute: args.rate === undefined ? undefined : Number(args.rate),
    burstPerSecond: args.burst === undefined ? undefined : Number(args.burst),
  };
  if (args.plan !== undefined) {
    if (!PLAN_NAMES.includes(args.plan as PlanName))
      throw new Error(`--plan must be one of ${PLAN_NAMES.join(', ')}`);
    return [{ name: args.plan, limits: resolvePlan(args.plan as PlanName, overrides) }];
  }
  return [
    { name: 'team', limits: resolvePlan('team') },
    { name: 'custom', limits: { ratePerMinute: 600, burstPerSecond: 50, dailyCap: null } },
  ];
}

async function openTarget(plan: Plan): Promise<Target> {
  if (args['base-url'] !== undefined) {
    if (args['api-key'] === undefined) throw new Error('--base-url needs --api-key');
    return { baseUrl: args['base-url'], apiKey: args['api-key'], close: async () => undefined };
  }
  const sandbox = await startServiceSandbox({ limits: plan.limits, seedCalls: 50, seed: 7 });
  return { baseUrl: sandbox.url, apiKey: sandbox.apiKey, close: () => sandbox.close() };
}

/** The sandbox's counters; null for a Service without the admin API. */
async function readCounters(baseUrl: string): Promise<Counters | null> {
  try {
    const res = await fetch(new URL('/_admin/counters', baseUrl));
    if (!res.ok) return null;
    return (await res.json()) as Counters;
  } catch {
    return null;
  }
}

/** Wraps the budget to measure how long each request waited for its slot. */
function measured(inner: RequestBudget) {
  const waits: Record<Priority, number[]> = { live: [], writeback: [], backfill: [] };
  const waiting = new Map<symbol, { priority: Priority; since: number }>();
  let sent = 0;
  const budget: RequestBudget = {
    run(priority, fn, options) {
      const key = Symbol();
      const since = performance.now();
      waiting.set(key, { priority, since });
      const result = inner.run(
        priority,
        () => {
          waiting.delete(key);
          waits[priority].push(performance.now() - since);
          sent++;
          return fn();
        },
        options,
      );
      result.catch(() => waiting.delete(key));
      return result;
    },
    pauseFor: (ms, reason) => inner.pauseFor(ms, reason),
    stats: () => inner.stats(),
    close: () => inner.close(),
  };
  /** Requests of `priority` still waiting now, with their wait so far. */
  const stillWaiting = (priority: Priority) =>
    [...waiting.values()].filter((w) => w.priority === priority).map((w) => performance.now() - w.since);
  return { budget, waits, stillWaiting, sent: () => sent };
}

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function runOnce(config: RunConfig, random: () => number): Promise<RunResult> {
  const target = await openTarget(config.plan);
  const gate =
    config.limiter === 'crm-sync'
      ? createRequestBudget({
          limits: config.plan.limits,
          clock: systemClock,
          liveWindowReserve: config.reserve,
          paceLowerPriorities: config.pace,
          ...(marginMs !== undefined && { safetyMarginMs: marginMs }),
        })
      : createLimiterBudget(config.limiter, config.plan.limits);
  const m = measured(gate);
  const client = createServiceClient({
    baseUrl: target.baseUrl,
    apiKey: target.apiKey,
    budget: m.budget,
    maxAttempts: 1,
  });
  const before = await readCounters(target.baseUrl);
  let client429 = 0;
  let ids: string[] = [];
  let stopping = false;

  const oneRequest = async (priority: Priority) => {
    try {
      if (ids.length === 0) {
        const page = await client.listCallsPage({ limit: 50 }, { priority });
        ids = page.calls.map((c) => c.id);
      } else {
        await client.getCall(ids[Math.floor(random() * ids.length)]!, { priority });
      }
    } catch (error) {
      if (error instanceof ServiceRateLimitedError || error instanceof ServiceDailyCapError) client429++;
      else if (!(error instanceof BudgetClosedError)) throw error;
    }
  };

  const startedAt = performance.now();
  const endsAt = startedAt + seconds * 1000;
  const backfill = Array.from({ length: BACKFILL_DEPTH }, async () => {
    while (!stopping) await oneRequest('backfill');
  });
  const lives: Promise<void>[] = [];
  const liveArrivals = (async () => {
    for (;;) {
      const next = performance.now() + 2000 + random() * 3000;
      if (next > endsAt - LIVE_QUIET_END_MS) return;
      await delay(next - performance.now());
      lives.push(oneRequest('live'));
    }
  })();

  await delay(Math.max(0, endsAt - performance.now()));
  stopping = true;
  const cut = m.stillWaiting('live');
  await gate.close();
  await Promise.all([...backfill, liveArrivals, ...lives]);
  await client.close();
  const after = await readCounters(target.baseUrl);
  await target.close();

  const counters =
    after && before
      ? {
          accepted: after.accepted - before.accepted,
          rejected429: after.rejected429 - before.rejected429,
          maxInAnySecond: after.maxInAnySecond,
          maxInAnyMinute: after.maxInAnyMinute,
        }
      : null;
  return {
    config,
    sent: m.sent(),
    client429,
    counters,
    mostAllowed: maxStartsInSpan(config.plan.limits, seconds * 1000),
    liveWaits: [...m.waits.live, ...cut],
    liveCut: cut.length,
  };
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function row(r: RunResult): (string | number)[] {
  const { limits } = r.config.plan;
  const accepted = r.counters?.accepted ?? r.sent - r.client429;
  const ms = (v: number) => (Number.isNaN(v) ? '-' : `${Math.round(v)} ms`);
  const ours = r.config.limiter === 'crm-sync';
  return [
    r.config.plan.name,
    `${limits.ratePerMinute}/min ${limits.burstPerSecond}/s`,
    r.config.limiter,
    ours ? r.config.reserve : '-',
    ours ? (r.config.pace ? 'on' : 'off') : '-',
    r.sent,
    accepted,
    r.client429,
    r.counters ? r.counters.rejected429 : 'n/a',
    r.counters ? `${r.counters.maxInAnySecond}/${limits.burstPerSecond}` : 'n/a',
    r.counters ? `${r.counters.maxInAnyMinute}/${limits.ratePerMinute}` : 'n/a',
    r.mostAllowed,
    `${((100 * accepted) / r.mostAllowed).toFixed(1)} %`,
    r.liveCut > 0 ? `${r.liveWaits.length} (${r.liveCut} cut)` : r.liveWaits.length,
    ms(percentile(r.liveWaits, 50)),
    ms(percentile(r.liveWaits, 95)),
    ms(Math.max(...r.liveWaits)),
  ];
}

async function main(): Promise<void> {
  if (!(seconds > 0)) throw new Error('--seconds must be a positive number');
  const random = seeded(Number(args.seed));
  const configs: RunConfig[] = [];
  const limiters = args.limiters
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const name of limiters) {
    if (!LIMITER_NAMES.includes(name as LimiterName))
      throw new Error(`--limiters takes ${LIMITER_NAMES.join(', ')}`);
  }
  for (const plan of plansToRun()) {
    const ours = (reserve: number, pace: boolean) =>
      configs.push({ plan, limiter: 'crm-sync', reserve, pace });
    for (const reserve of numberList(args.reserves)) ours(reserve, true);
    for (const reserve of numberList(args['unpaced-reserves'])) ours(reserve, false);
    for (const name of limiters)
      configs.push({ plan, limiter: name as LimiterName, reserve: 0, pace: false });
  }
  const target = args['base-url'] ?? 'the in-process Service sandbox (fresh per run)';
  console.log(`request budget benchmark: ${configs.length} runs of ${seconds} s against ${target}`);
  const results: RunResult[] = [];
  for (const config of configs) {
    const r = await runOnce(config, random);
    results.push(r);
    const last = row(r);
    console.log(
      `  ${config.plan.name} ${config.limiter} reserve ${last[3]} pace ${last[4]}: utilisation ${last[12]}, 429s ${last[8]}, live p95 ${last[15]}`,
    );
  }
  console.log();
  console.log(
    formatTable(
      [
        'plan',
        'limits',
        'limiter',
        'reserve',
        'pace',
        'sent',
        'accepted',
        '429 client',
        '429 server',
        'max/s',
        'max/min',
        'most allowed',
        'utilisation',
        'live n',
        'live p50',
        'live p95',
        'live max',
      ],
      results.map(row),
    ),
  );
  console.log('\ntargets: 0 x 429, utilisation >= 98 %, live p95 <= 1000 ms');
  console.log('limiters: bench/limiters.ts says how each is configured (as its README suggests).');
  console.log('most allowed = greedy maximum of the 1 s and 60 s windows over the run length.');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
