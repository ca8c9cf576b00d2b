/**
 * Standing warnings at the top of every console page: things an admin must act on. Pure: built
 * from the status snapshot, whose silence-and-drift warnings (src/drift/) come last.
 */
import type { DriftWarning } from '../drift/detectors.js';
import { crmStandingLines } from '../ops/crmStanding.js';
import type { StatusSnapshot } from '../ops/status.js';

export interface StandingWarning {
  code:
    | 'SERVICE_KEY_REJECTED'
    | 'CRM_CREDENTIALS_REJECTED'
    | 'DAILY_CAP_REACHED'
    | 'CRM_FIELD_MISSING'
    | 'CRM_VALIDATION_REJECTED'
    | DriftWarning['code'];
  message: string;
}

export function standingWarnings(snapshot: StatusSnapshot): StandingWarning[] {
  const out: StandingWarning[] = [];
  if (snapshot.worker?.serviceKeyRejected === true) {
    out.push({
      code: 'SERVICE_KEY_REJECTED',
      message: 'The Service rejected the API key: no calls are synced. Replace SERVICE_API_KEY and restart.',
    });
  }
  if (crmCredentialsRejected(snapshot)) {
    out.push({
      code: 'CRM_CREDENTIALS_REJECTED',
      message: `${snapshot.crm === 'hubspot' ? 'HubSpot' : 'Salesforce'} rejected the credentials: nothing is written. Fix them (crm-sync doctor) and restart.`,
    });
  }
  const { dailyCap, usedToday } = snapshot.budget;
  if (dailyCap !== null && usedToday >= dailyCap) {
    out.push({
      code: 'DAILY_CAP_REACHED',
      message: `The Service's daily cap (${dailyCap} requests) is spent; work waits until midnight UTC.`,
    });
  }
  for (const w of crmStandingLines(snapshot.crmStanding ?? {}))
    out.push({ code: w.code as StandingWarning['code'], message: w.message });
  for (const w of snapshot.drift ?? []) out.push({ code: w.code, message: w.message });
  return out;
}

/**
 * Whether the CRM rejected the worker's credentials. Kept in one place on purpose: the worker's
 * CRM-credentials status is being added in parallel, so this reads the shapes it may take
 * (worker.crmCredentials {ok} or 'rejected', worker.crmCredentialsOk), and falls back to a
 * CRM_AUTH error among the failures of the last hour.
 */
export function crmCredentialsRejected(snapshot: StatusSnapshot): boolean {
  // The running worker's own judgement (src/worker/crmCredentials.ts), else jobs held back on
  // CRM_AUTH in the table (a status read from the database alone).
  const state = snapshot.worker?.crmCredentials as { accepted?: boolean | null } | undefined;
  if (state && state.accepted !== null && state.accepted !== undefined) return state.accepted === false;
  return snapshot.crmCredentials.heldJobs > 0;
}
