/**
 * The worker's readiness checks (database, Service, CRM) as /readyz reports them. Every detail is
 * our own words naming the dependency and the setting to check; what actually went wrong (the
 * Service's text, a database error) is in `crm-sync status` and /status, behind the admin access.
 */
import { composeReadiness } from '../http/readiness.js';
import type { ReadinessCheckResult, ReadinessReport } from '../http/types.js';
import type { ServiceHealth } from '../service/types.js';
import type { Clock } from '../util/clock.js';
import { crmStandingLines, type CrmStanding } from '../ops/crmStanding.js';

export const READINESS_ADVICE = {
  database: 'the database does not answer: check DATABASE_URL (or DATA_DIR for the embedded database)',
  service:
    'the Service is unreachable: check SERVICE_API_BASE_URL and the network (the last error is in crm-sync status)',
  serviceKey: 'the Service rejected the API key (401): check SERVICE_API_KEY',
  crm: 'the CRM check failed: see crm-sync status',
} as const;

export function workerReadiness(deps: {
  pingDatabase: () => Promise<unknown>;
  serviceHealth: () => ServiceHealth;
  /** Already in our own words (credentials.ts names the credential and its setting). */
  crm: () => ReadinessCheckResult;
  /** Standing CRM warnings (crmStanding.ts): named in `crmFields`, never a readiness failure. */
  crmStanding?: () => Promise<CrmStanding>;
  clock: Clock;
}): () => Promise<ReadinessReport> {
  return composeReadiness(
    {
      database: async () => {
        await deps.pingDatabase();
        return { ok: true };
      },
      service: async () => {
        const health = deps.serviceHealth();
        if (health.unauthorized) return { ok: false, detail: READINESS_ADVICE.serviceKey };
        // Judged from the last Service request's outcome, so readiness probes spend no budget.
        if (health.lastError?.startsWith('SERVICE_TRANSIENT')) {
          return { ok: false, detail: READINESS_ADVICE.service };
        }
        return { ok: true };
      },
      crm: async () => deps.crm(),
      ...(deps.crmStanding ? { crmFields: () => standingCheck(deps.crmStanding!) } : {}),
    },
    { clock: deps.clock, advice: READINESS_ADVICE },
  );
}

/**
 * The fields calls are written without (with how to create each) and how many calls a CRM rule
 * refused (their messages, the CRM's words, stay behind the admin access in status); ok either
 * way, since the calls are written or fail alone.
 */
async function standingCheck(read: () => Promise<CrmStanding>): Promise<ReadinessCheckResult> {
  try {
    const standing = await read();
    const refused = standing.refusals.reduce((n, r) => n + r.calls, 0);
    const lines = crmStandingLines({ fieldGaps: standing.fieldGaps }).map((l) => `${l.code}: ${l.message}`);
    if (refused > 0)
      lines.push(`CRM_VALIDATION_REJECTED: ${refused} call(s) refused by a CRM rule (see crm-sync status)`);
    return { ok: true, detail: lines.join('\n') || 'none' };
  } catch {
    return { ok: true, detail: 'not read (see the database check)' };
  }
}
