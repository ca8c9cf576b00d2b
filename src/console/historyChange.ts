import { isRematchEvent, type SyncEventRecord } from '../store/syncEventRepo.js';

/** The "Change" cell of a call's timeline: a move between states, a failed try, or a rematch. */
export function historyChange(e: Pick<SyncEventRecord, 'fromState' | 'toState' | 'detail'>): string {
  if (e.fromState === null) return `→ ${e.toState}`;
  if (isRematchEvent(e)) return `${e.toState} (rematched)`;
  if (e.fromState === e.toState) return `${e.toState} (try failed)`;
  return `${e.fromState} → ${e.toState}`;
}
