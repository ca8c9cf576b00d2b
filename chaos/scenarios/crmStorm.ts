/**
 * CRM storm, once per CRM (each with its own stack and worker): HubSpot answers random
 * TEN_SECONDLY_ROLLING 429s with its X-HubSpot-RateLimit-* headers and 500/502/503; Salesforce
 * answers random 403 REQUEST_LIMIT_EXCEEDED (the concurrent-request limit) and 500/502/503; on
 * both, some 5xx come after the write was carried out, and OAuth access tokens expire every few
 * seconds (401 -> refresh). Salesforce's daily allowance also runs out for a few seconds (403
 * REQUEST_LIMIT_EXCEEDED TotalRequests), which the worker waits out (SALESFORCE_LIMIT_PAUSE_MS). Afterwards, on each CRM: every call written back with exactly one
 * activity carrying the Service's scores and every draft attached exactly once.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { CrmFaultInjector } from '@crm-sync/sandboxes/crmFaults';
import type { SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import {
  checkWrittenOnceIn,
  hubspotReadback,
  salesforceReadback,
  type CrmReadback,
} from '../lib/crmReadback.js';
import type { Person } from '../../test/e2e/harness.js';
import { CallLoad } from '../lib/load.js';
import { startChaosWorker, type ChaosWorker } from '../lib/processes.js';
import { startStack, type Stack } from '../lib/stack.js';
import { unquiet, waitQuiescent } from '../lib/verify.js';
import { Verdict, type Scenario, type ScenarioContext } from '../scenario.js';

/** Access tokens live this long, so every phase meets several expiries. */
const TOKEN_TTL_MS = 4_000;
const QUIESCENCE_MS = 90_000;
/** The Salesforce org's daily allowance is spent from this far into the storm, for this long. */
const DAILY_LIMIT_AT_MS = 5_000;
const DAILY_LIMIT_FOR_MS = 4_000;
/** The worker's hold after REQUEST_LIMIT_EXCEEDED (15 min by default). */
const DAILY_PAUSE_MS = 3_000;
/** Every token issued so far is expired this often, besides the short lifetime. */
const EXPIRE_EVERY_MS = 2_500;
const STORM = { rateLimitRate: 0.1, errorRate: 0.15, actedShare: 0.5 };

/**
 * People the Salesforce sandbox matches by their email's domain (an Account's Website): the
 * HubSpot load's strangers at Globex have no Account there and are skipped by design.
 */
const SALESFORCE_DOMAINS = [
  ['acme.example', 'Acme Corp'],
  ['initech.example', 'Initech'],
  ['umbrella.example', 'Umbrella Inc'],
  ['wayne.example', 'Wayne Enterprises'],
] as const;

function salesforceParticipant(n: number): Person {
  const [domain, company] = SALESFORCE_DOMAINS[n % SALESFORCE_DOMAINS.length]!;
  return { name: `Person ${n}`, email: `person.${n}@${domain}`, company };
}

export interface CrmStormOptions {
  /** Calls per CRM. */
  calls: number;
  budgetMs: number;
}

export function crmStormScenario(options: CrmStormOptions): Scenario {
  return {
    name: 'crm-storm',
    description:
      'HubSpot 429s with rate-limit headers and 5xx, Salesforce REQUEST_LIMIT_EXCEEDED and 5xx, expiring tokens; both CRMs',
    budgetMs: options.budgetMs,
    run: async (ctx) => {
      const verdict = new Verdict();
      await runPhase(ctx, verdict, 'hubspot', options);
      if (!ctx.signal.aborted) await runPhase(ctx, verdict, 'salesforce', options);
      return verdict.result();
    },
  };
}

/** A secret of this run: distinctive, and registered for the secrets scan. */
function secret(ctx: ScenarioContext, name: string): string {
  const value = `chaos${name}${randomBytes(12).toString('hex')}`;
  ctx.secrets.add(name, value);
  return value;
}

async function startCrmStack(ctx: ScenarioContext, crm: 'hubspot' | 'salesforce'): Promise<Stack> {
  const faultSeed = Math.floor(ctx.random() * 2 ** 31);
  const base = { database: 'postgres' as const, plan: 'team' as const, pollSchedule: '*/5 * * * * *' };
  if (crm === 'hubspot') {
    return startStack(ctx, {
      ...base,
      // A one-second window, so waiting out a ten-second-window 429 as the headers say takes 1 s.
      hubspot: {
        limits: { windowMs: 1_000, perWindow: 40 },
        faultSeed,
        oauth: {
          clientSecret: secret(ctx, 'HsClientSecret'),
          refreshToken: secret(ctx, 'HsRefreshToken'),
          accessTokenTtlMs: TOKEN_TTL_MS,
        },
      },
    });
  }
  return startStack(ctx, {
    ...base,
    salesforce: { faultSeed, tokenTtlMs: TOKEN_TTL_MS, clientSecret: secret(ctx, 'SfClientSecret') },
  });
}

async function runPhase(
  ctx: ScenarioContext,
  verdict: Verdict,
  crm: 'hubspot' | 'salesforce',
  options: CrmStormOptions,
): Promise<void> {
  const prefix = crm === 'hubspot' ? 'hs ' : 'sf ';
  const stack = await startCrmStack(ctx, crm);
  const { hs, sf } = stack;
  if (sf) ctx.secrets.add('SfRefreshToken', sf.oauth.refreshToken);
  registerIssuedTokens(ctx, stack);
  const env = await stack.env(
    sf
      ? {
          SALESFORCE_LIMIT_PAUSE_MS: String(DAILY_PAUSE_MS),
          SALESFORCE_ACCESS_TOKEN: undefined,
          SALESFORCE_CLIENT_ID: sf.oauth.clientId,
          SALESFORCE_CLIENT_SECRET: sf.oauth.clientSecret,
          SALESFORCE_REFRESH_TOKEN: sf.oauth.refreshToken,
        }
      : {
          HUBSPOT_ACCESS_TOKEN: undefined,
          HUBSPOT_CLIENT_ID: hs.oauth.clientId,
          HUBSPOT_CLIENT_SECRET: hs.oauth.clientSecret,
          HUBSPOT_REFRESH_TOKEN: hs.oauth.refreshToken,
        },
  );
  const faults: CrmFaultInjector = sf ? sf.state.randomFaults : hs.state.randomFaults;
  const readback: CrmReadback = sf ? salesforceReadback(sf) : hubspotReadback(hs);
  let worker: ChaosWorker | undefined;
  try {
    worker = await startChaosWorker(env, { dir: ctx.dir, label: `worker-${crm}` });
    stack.svc.state.settings.webhookUrl = `${worker.url}/webhooks`;
    // The storm starts once the worker is up: its start-up checks are not what is tested here.
    faults.rates = { ...STORM };
    // And for sure, whatever the draws: the first batch write is carried out, then answered 500.
    if (sf) {
      sf.state.injectFault({ status: 500, errorCode: 'UNKNOWN_EXCEPTION', method: 'PATCH', acted: true });
    } else hs.state.faults.add({ status: 500, match: '/batch/upsert', acted: true });
    // Besides the short lifetime, every token issued so far dies now and then, so requests in
    // flight meet 401s (HubSpot EXPIRED_AUTHENTICATION, Salesforce INVALID_SESSION_ID).
    const expiring = setInterval(
      () => (sf ? sf.state.expireTokens() : hs.state.auth.expireAll()),
      EXPIRE_EVERY_MS,
    );
    ctx.signal.addEventListener('abort', () => clearInterval(expiring));
    // Salesforce: the org's daily allowance runs out for a few seconds (403 TotalRequests);
    // the worker holds its requests for SALESFORCE_LIMIT_PAUSE_MS, then carries on.
    const spent = sf ? spendAllowanceFor(sf, DAILY_LIMIT_AT_MS, DAILY_LIMIT_FOR_MS) : undefined;
    const load = new CallLoad(stack.svc, ctx.random, {
      calls: options.calls,
      ...(sf && { participant: salesforceParticipant }),
    });
    await load.run(ctx.signal);
    ctx.log(`${crm}: ${load.callIds.length} calls made; waiting for the worker to settle`);
    const { states, ms, quiet, jobs } = await waitQuiescent(worker, load.callIds, {
      timeoutMs: QUIESCENCE_MS,
      signal: ctx.signal,
    });
    clearInterval(expiring);
    await spent?.done;
    verdict.figure(`${prefix}settled in`, `${(ms / 1000).toFixed(0)} s`);
    verdict.check(
      quiet,
      `${readback.name}: not quiescent within ${QUIESCENCE_MS / 1000} s: ${unquiet(states, jobs)}`,
    );
    checkWrittenOnceIn(verdict, { svc: stack.svc, crm: readback, callIds: load.callIds, states, prefix });
    const { injected, acted } = faults.summary();
    const limited = injected.rate_limit ?? 0;
    const errors = (injected['500'] ?? 0) + (injected['502'] ?? 0) + (injected['503'] ?? 0);
    const refreshes = sf
      ? (sf.state.requestCounts()['POST /services/oauth2/token'] ?? 0)
      : hs.state.requests.count('POST', '/oauth/2026-03/token');
    const dailyLimited = sf ? (spent?.refused() ?? 0) : 0;
    const unauthorized = sf
      ? sf.state.recentRequests().filter((r) => r.status === 401).length
      : hs.state.requests.records.filter((r) => r.status === 401).length;
    verdict.figure(
      `${prefix}faults`,
      `${sf ? 'limit' : '429'} ${limited}, 5xx ${errors} (${acted} after acting), ${sf ? `daily limit ${dailyLimited}, ` : ''}401 ${unauthorized}, token grants ${refreshes}`,
    );
    verdict.check(
      limited > 0 && errors > 0,
      `${readback.name}: the storm injected too little (${limited} limits, ${errors} 5xx)`,
    );
    if (sf) verdict.check(dailyLimited > 0, 'Salesforce: the spent daily allowance was never met');
    verdict.check(
      unauthorized > 0 && refreshes > 1,
      `${readback.name}: no expired token met during the run (${unauthorized} 401s, ${refreshes} grants)`,
    );
  } finally {
    await worker?.stop();
    await stack.close();
  }
}

/**
 * Spends the org's daily allowance from `atMs` from now for `forMs` (every request meanwhile is
 * answered 403 REQUEST_LIMIT_EXCEEDED TotalRequests), then gives it back; `refused()` counts those
 * answers.
 */
function spendAllowanceFor(sf: SalesforceSandbox, atMs: number, forMs: number) {
  const before = () => sf.state.recentRequests().filter((r) => r.status === 403).length;
  let refusedBefore = 0;
  let refusedAfter = 0;
  const done = (async () => {
    await delay(atMs);
    refusedBefore = before() - (sf.state.randomFaults.summary().injected.rate_limit ?? 0);
    sf.state.setApiUsage(sf.state.apiLimit);
    await delay(forMs);
    sf.state.setApiUsage(0);
    refusedAfter = before() - (sf.state.randomFaults.summary().injected.rate_limit ?? 0);
  })();
  return { done, refused: () => refusedAfter - refusedBefore };
}

/** Every access token the CRM sandbox issues during the run goes to the secrets scan too. */
function registerIssuedTokens(ctx: ScenarioContext, { hs, sf }: Stack): void {
  if (sf) {
    const issuer = sf.state.issuer;
    const issue = issuer.issue.bind(issuer);
    issuer.issue = (userId: string) => {
      const token = issue(userId);
      ctx.secrets.add('SfAccessToken', token);
      return token;
    };
    return;
  }
  const auth = hs.state.auth;
  const grant = auth.token.bind(auth);
  auth.token = (form: Record<string, string>) => {
    const answer = grant(form);
    if (typeof answer.body.access_token === 'string')
      ctx.secrets.add('HsAccessToken', answer.body.access_token);
    return answer;
  };
}
