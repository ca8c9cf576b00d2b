/** A webhook delivery for the inbox's round statement (storeRound), as the inbox builds one. */
import type { RoundDelivery } from '../../src/store/inboxRound.js';

export const T0 = new Date('2026-03-02T10:00:00.000Z');

export function delivery(
  eventId: string,
  callId: string,
  job: Partial<NonNullable<RoundDelivery['job']>> | null = {},
  draftId?: string,
): RoundDelivery {
  return {
    delivery: {
      eventId,
      type: 'analysis.ready',
      callId,
      rawBody: JSON.stringify({ id: eventId, data: { call_id: callId } }),
      receivedAt: T0,
      processedAt: T0,
    },
    call: { participantEmail: `${callId}@acme.example` },
    draft: draftId ? { id: draftId, subject: 'Next steps', body: 'Hi', to: ['a@acme.example'] } : null,
    job: job && {
      spec: { kind: 'writeback', key: `writeback:${callId}`, payload: { callId }, priority: 5, now: T0 },
      whileIn: null,
      onlyForNewDraft: false,
      ...job,
    },
  };
}
