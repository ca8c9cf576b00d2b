import type { SalesforceConfig } from '../settings.js';
import { silentLogger, type Logger } from '../../log/logger.js';
import { systemClock, type Clock } from '../../util/clock.js';
import { CrmDailyLimitError } from '../errors.js';
import type { CrmSlotLedger } from '../limits/ledger.js';
import { DEFAULT_DEAL_RULE, type CrmAdapter } from '../types.js';
import type { RefreshTokenStore } from '../refreshTokens.js';
import { DEFAULT_API_VERSION, MIN_API_VERSION } from './apiVersions.js';
import { ApiBudget, DEFAULT_BUDGET, type ApiBudgetOptions } from './budget.js';
import type { SalesforceContext } from './context.js';
import { DescribeCache } from './describe.js';
import { toCrmError } from './errors.js';
import { matchParticipants } from '../match/run.js';
import { salesforceCandidates } from './candidates.js';
import { createSession, type AuthMode } from './session.js';
import { verifySalesforceSetup } from './setup.js';
import { ControlledTransport, proxyResolver } from './transport.js';
import { KnownKeys, upsertActivities, upsertFollowups, type KeyFields } from './writes.js';
import { findWrittenCalls } from './written.js';
import { readDeals, updateDeals } from './deals.js';
import { moveTaskLinks } from './relink.js';

export interface SalesforceAdapterDeps {
  config: SalesforceConfig;
  clock?: Clock;
  logger?: Logger;
  /** Per-request timeout (default 30 s). */
  requestTimeoutMs?: number;
  /**
   * Let jsforce retry GETs itself on 429/5xx (up to 5 times, 0.5–8 s apart). Default false:
   * the worker retries CrmTransientError with its own backoff, and a live lookup must not stall.
   */
  sdkRetries?: boolean;
  /** Proxy URL; null for none; default: https_proxy/http_proxy, except for loopback hosts. */
  httpProxy?: string | null;
  /** Where to stop before the org's daily API allowance (defaults in DEFAULT_BUDGET). */
  budget?: Partial<ApiBudgetOptions>;
  /** Where the allowance is counted: default this process alone; shared through the database by replicas. */
  ledger?: CrmSlotLedger | undefined;
  /** External-id fields used as upsert keys (defaults CrmSync_Call_Id__c, CrmSync_Followup_Id__c). */
  keyFields?: Partial<KeyFields>;
  /**
   * Refresh-token flow: where the token to present comes from and a rotated one goes; shared
   * through the database by every process (src/store/crmCredentialStore.ts). Default: memory.
   */
  refreshTokens?: RefreshTokenStore | undefined;
  /** Environment for proxy discovery (default process.env). */
  env?: Record<string, string | undefined>;
}

export interface SalesforceAdapter extends CrmAdapter {
  readonly name: 'salesforce';
  readonly authMode: AuthMode;
}

export const DEFAULT_KEY_FIELDS: KeyFields = {
  activity: 'CrmSync_Call_Id__c',
  followup: 'CrmSync_Followup_Id__c',
};

/** The Salesforce CrmAdapter, through jsforce's Connection. */
export function createSalesforceAdapter(deps: SalesforceAdapterDeps): SalesforceAdapter {
  const clock = deps.clock ?? systemClock;
  const logger = (deps.logger ?? silentLogger).child({ crm: 'salesforce' });
  const config = { ...deps.config, apiVersion: deps.config.apiVersion || DEFAULT_API_VERSION };
  if (Number.parseInt(config.apiVersion, 10) < MIN_API_VERSION) {
    throw new Error(
      `SALESFORCE_API_VERSION ${config.apiVersion} is too old: crm-sync needs ${MIN_API_VERSION}.0 or later`,
    );
  }
  const budget = new ApiBudget(
    clock,
    {
      ...DEFAULT_BUDGET,
      ...(config.limitPauseMs !== undefined && { pauseMs: config.limitPauseMs }),
      ...deps.budget,
    },
    deps.ledger,
  );
  const keys: KeyFields = { ...DEFAULT_KEY_FIELDS, ...deps.keyFields };
  const proxyFor = proxyResolver(deps.httpProxy, deps.env ?? process.env);
  const timeoutMs = deps.requestTimeoutMs ?? 30_000;
  const sdkRetries = deps.sdkRetries ?? false;

  let markHealthy = () => {};
  const restTransport = new ControlledTransport({
    timeoutMs,
    sdkRetries,
    proxyFor,
    onRequest: (req) => {
      budget.onRequest();
      logger.debug({ method: req.method, url: req.url.split('?')[0] }, 'salesforce request');
    },
    onResponse: (res) => {
      budget.onLimitInfo(res.headers['sforce-limit-info']);
      if (res.statusCode !== 401) markHealthy();
    },
  });
  const authTransport = new ControlledTransport({ timeoutMs, sdkRetries: false, proxyFor });
  const session = createSession({
    config,
    clock,
    logger,
    restTransport,
    authTransport,
    dailyPauseMs: budget.pauseMs,
    refreshTokens: deps.refreshTokens,
  });
  markHealthy = session.markHealthy;
  const { conn } = session;

  const call = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
    const slot = await budget.acquire();
    try {
      await session.ensure();
      return await fn();
    } catch (err) {
      const mapped = toCrmError(err, {
        dailyPauseMs: budget.pauseMs,
        refreshFailure: session.refreshFailure(),
      });
      if (mapped instanceof CrmDailyLimitError) budget.pause();
      logger.debug({ op: label, err: mapped.message }, 'salesforce call failed');
      throw mapped;
    } finally {
      budget.release(slot);
    }
  };
  const describe = new DescribeCache((type) => call(`describe ${type}`, () => conn.describe(type)));
  const ctx: SalesforceContext = {
    conn,
    call,
    describe,
    logger,
    credentialProblem: session.credentialProblem,
  };
  const known = new KnownKeys();

  return {
    name: 'salesforce',
    authMode: session.mode,
    lookup: async (participant, fields, rule = DEFAULT_DEAL_RULE) => {
      const found = await matchParticipants(salesforceCandidates(ctx, fields), [participant], rule);
      return [...found.values()][0]!;
    },
    lookupMany: (participants, fields, rule = DEFAULT_DEAL_RULE) =>
      matchParticipants(salesforceCandidates(ctx, fields), participants, rule),
    upsertActivities: (writes) => upsertActivities(ctx, writes, keys, known),
    upsertFollowups: (writes) => upsertFollowups(ctx, writes, keys, known),
    updateDeals: (writes) => updateDeals(ctx, writes),
    readDeals: (dealIds, fields) => readDeals(ctx, dealIds, fields),
    // The `limits` resource: one small read any integration user may make (doctor starts with it).
    checkCredentials: async () => {
      await call('limits', () => conn.limits());
    },
    findWritten: (callIds, query = {}) => findWrittenCalls(ctx, callIds, query, keys),
    moveActivityLinks: (moves, options) => moveTaskLinks(ctx, moves, options),
    verifySetup: (required, options) => {
      // The mapping names its key fields; without one, the default activity key is still needed.
      const hasKey = required.some((r) => r.object === 'Task' && r.unique);
      const key = {
        object: 'Task',
        name: keys.activity,
        type: 'string' as const,
        unique: true,
        label: 'CRM Sync call id',
      };
      return verifySalesforceSetup(ctx, hasKey ? required : [key, ...required], {
        ...options,
        nowMs: clock.now(),
      });
    },
    usage: () => budget.usage(),
  };
}
