import type { Call } from '../service/types.js';
import type { CallFacts } from '../store/syncStatus/discovered.js';

/** The call fields admins filter on in sync_status. */
export function callFactsOf(call: Call): CallFacts {
  const created = Date.parse(call.created_at);
  return {
    createdAt: Number.isNaN(created) ? null : new Date(created),
    participantEmail: call.participant?.email ?? null,
    participantCompany: call.participant?.company ?? null,
    overallScore: call.scoring?.overall ?? null,
    status: call.status,
  };
}

/** Call statuses after which a live context push is pointless (CONTRACT.md's assumed values). */
export const FINISHED_STATUSES: ReadonlySet<string> = new Set([
  'completed',
  'processing',
  'analyzed',
  'failed',
]);
