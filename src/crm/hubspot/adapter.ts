import type { Logger } from 'pino';
import { silentLogger } from '../../log/logger.js';
import { systemClock, type Clock } from '../../util/clock.js';
import type { CrmSlotLedger } from '../limits/ledger.js';
import {
  DEFAULT_DEAL_RULE,
  type ActivityWrite,
  type CrmAdapter,
  type FieldRequirement,
  type FollowupWrite,
  type LinkMoveResult,
  type WriteResult,
} from '../types.js';
import type { RefreshTokenStore } from '../refreshTokens.js';
import { TokenSource, type HubSpotCredentials, type RefreshFn, type TokenGrant } from './auth.js';
import { RequestGate, type GateOptions } from './gate.js';
import { matchParticipants } from '../match/run.js';
import { hubSpotCandidates } from './candidates.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';
import { createRunner } from './runner.js';
import { DEFAULT_HUBSPOT_API_VERSION } from './paths.js';
import { createHubSpotApi, createTokenRefresher, type HubSpotApi } from './sdk.js';
import { verifyHubSpotSetup } from './setup.js';
import { toHubSpotProperties } from './values.js';
import { CALL_LINKS, engagementOf } from './linkTypes.js';
import { upsertAndLink, type WriteItem } from './writeback.js';
import { findWrittenCalls } from './written.js';
import { readDeals, updateDeals } from './deals.js';
import { moveEngagementLinks } from './relink.js';

export interface HubSpotAdapterDeps {
  /**
   * Base URL (`HUBSPOT_BASE_URL`), the date version (`HUBSPOT_API_VERSION`, default 2026-09) and a
   * Service Key / private-app token or OAuth client + refresh token.
   */
  config: HubSpotCredentials & { baseUrl: string; apiVersion?: string | undefined };
  clock?: Clock;
  logger?: Logger;
  /** Rate limits before HubSpot's headers say otherwise; see GateOptions for defaults. */
  limits?: GateOptions;
  /** Where the limits are counted: default this process alone; shared through the database by replicas. */
  ledger?: CrmSlotLedger | undefined;
  retry?: Partial<RetryPolicy>;
  /** Jitter source for backoff (default Math.random). */
  random?: () => number;
  /** Unique property holding the Service call id on calls (default `crmsync_call_id`). */
  callIdProperty?: string;
  /** Unique property holding the draft id on notes and tasks (default `crmsync_followup_id`). */
  followupIdProperty?: string;
  /** Longest text per property, where shorter than HubSpot's 65,536. */
  maxLengths?: Record<string, number>;
  /** OAuth: the refresh-token store shared by every process (src/store/crmCredentialStore.ts). */
  refreshTokens?: RefreshTokenStore | undefined;
  /** Called after an OAuth refresh, e.g. to persist a rotated refresh token. */
  onTokenRefresh?: (grant: TokenGrant) => void;
  /** Test seams: the token call and the API factory (default: the real SDK). */
  refreshFn?: RefreshFn;
  apiFactory?: (
    baseUrl: string,
    token: string,
    onResponse: (headers: Record<string, string>) => void,
    apiVersion: string,
  ) => HubSpotApi;
}

/** The HubSpot CrmAdapter, over the official SDK. */
export function createHubSpotAdapter(deps: HubSpotAdapterDeps): CrmAdapter {
  const clock = deps.clock ?? systemClock;
  const logger = (deps.logger ?? silentLogger).child({ crm: 'hubspot' });
  const baseUrl = deps.config.baseUrl.replace(/\/+$/, '');
  const apiVersion = deps.config.apiVersion ?? DEFAULT_HUBSPOT_API_VERSION;
  const gate = new RequestGate(clock, deps.limits, deps.ledger);
  const tokens = new TokenSource(
    deps.config,
    clock,
    deps.refreshFn ?? createTokenRefresher(baseUrl),
    (grant) => {
      logger.info('HubSpot OAuth access token refreshed');
      deps.onTokenRefresh?.(grant);
    },
    deps.refreshTokens,
  );
  const factory = deps.apiFactory ?? createHubSpotApi;
  const run = createRunner({
    clock,
    logger,
    gate,
    tokens,
    apiFor: (token) => factory(baseUrl, token, (headers) => gate.observe(headers), apiVersion),
    policy: { ...DEFAULT_RETRY_POLICY, ...deps.retry },
    random: deps.random ?? Math.random,
  });
  const callIdProperty = deps.callIdProperty ?? 'crmsync_call_id';
  const followupIdProperty = deps.followupIdProperty ?? 'crmsync_followup_id';
  const props = (p: ActivityWrite['properties']) => toHubSpotProperties(p, deps.maxLengths);

  const inOrder = <W>(
    writes: W[],
    keyOf: (w: W) => string,
    results: Map<string, WriteResult>,
  ): WriteResult[] =>
    writes.map((w) => {
      const key = keyOf(w);
      return results.get(key) ?? { key, ok: false, error: new Error(`no result for ${key}`) };
    });

  return {
    name: 'hubspot',

    async lookup(participant, fields, rule = DEFAULT_DEAL_RULE) {
      const found = await matchParticipants(hubSpotCandidates(run, fields), [participant], rule);
      return [...found.values()][0]!;
    },

    lookupMany(participants, fields, rule = DEFAULT_DEAL_RULE) {
      return matchParticipants(hubSpotCandidates(run, fields), participants, rule);
    },

    async upsertActivities(writes: ActivityWrite[]) {
      const results = new Map<string, WriteResult>();
      for (const [idProperty, group] of groupBy(writes, (w) => w.idField ?? callIdProperty)) {
        const items = group.map((w) => ({ key: w.callId, properties: props(w.properties), links: w.links }));
        for (const [k, v] of await upsertAndLink(run, 'calls', idProperty, items, CALL_LINKS))
          results.set(k, v);
      }
      return inOrder(writes, (w) => w.callId, results);
    },

    async upsertFollowups(writes: FollowupWrite[]) {
      // Notes need hs_timestamp; a draft is timestamped when written unless the mapping set it.
      const now = new Date(clock.now()).toISOString();
      const item = (w: FollowupWrite): WriteItem => ({
        key: w.key,
        properties: { hs_timestamp: now, ...props(w.properties) },
        links: w.links,
      });
      const groups = groupBy(
        writes,
        (w) => `${engagementOf(w.kind).objectType} ${w.idField ?? followupIdProperty}`,
      );
      const results = new Map<string, WriteResult>();
      for (const group of groups.values()) {
        const { objectType, links } = engagementOf(group[0]!.kind);
        const idProperty = group[0]!.idField ?? followupIdProperty;
        for (const [k, v] of await upsertAndLink(run, objectType, idProperty, group.map(item), links))
          results.set(k, v);
      }
      return inOrder(writes, (w) => w.key, results);
    },

    updateDeals(writes) {
      return updateDeals(run, writes, props);
    },

    readDeals(dealIds, fields) {
      return readDeals(run, dealIds, fields);
    },

    async checkCredentials() {
      // The read doctor starts with: it needs only the scopes the mapping's lookups need anyway.
      await run('credentials', (api) => api.listProperties('contacts'));
    },

    findWritten(callIds, query = {}) {
      return findWrittenCalls(run, callIds, query, { callIdProperty, followupIdProperty });
    },

    async moveActivityLinks(moves, options) {
      // One pass per object type (the call engagements, and drafts' notes or tasks); results in order.
      const byType = groupBy(
        moves.map((move, at) => ({ move, at })),
        ({ move }) => engagementOf(move.record).objectType,
      );
      const results: LinkMoveResult[] = [];
      for (const group of byType.values()) {
        const { objectType, links } = engagementOf(group[0]!.move.record);
        const done = await moveEngagementLinks(
          run,
          objectType,
          links,
          group.map((g) => g.move),
          options,
        );
        group.forEach(({ at }, i) => (results[at] = done[i]!));
      }
      return results;
    },

    verifySetup(required: FieldRequirement[], options = {}) {
      return verifyHubSpotSetup(run, required, options.fix === true);
    },

    usage() {
      return gate.usage();
    },
  };
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) out.set(keyOf(item), [...(out.get(keyOf(item)) ?? []), item]);
  return out;
}
