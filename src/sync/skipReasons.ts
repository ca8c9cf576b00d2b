/**
 * Why a call was skipped, as its move to `skipped` records it (sync_event.detail). The no-match
 * reason is also read back: the drift check (src/drift/) counts calls skipped for it.
 */
export const NO_MATCH_REASON = 'no CRM record matches';

export function noMatchReason(email: string): string {
  return `${NO_MATCH_REASON} ${email}`;
}
