import { describe, expect, it } from 'vitest';
import {
  ACTIVE_SYNC_STATES,
  assertTransition,
  canTransition,
  IllegalTransitionError,
  isEndState,
  isSyncState,
  nextSyncStates,
  replayPath,
  SYNC_STATES,
  syncPath,
} from '../../src/sync/states.js';

describe('sync state transition table', () => {
  it('moves a live call along the happy path', () => {
    const path = [
      'discovered',
      'context_pushed',
      'awaiting_analysis',
      'writing_back',
      'written_back',
    ] as const;
    for (let i = 1; i < path.length; i++) expect(canTransition(path[i - 1]!, path[i]!)).toBe(true);
  });

  it('lets a call found already finished go straight to write-back', () => {
    expect(canTransition('discovered', 'awaiting_analysis')).toBe(true);
    expect(canTransition('discovered', 'writing_back')).toBe(true);
  });

  it('refuses to go back to an earlier step or to stay put', () => {
    expect(canTransition('written_back', 'context_pushed')).toBe(false);
    expect(canTransition('awaiting_analysis', 'discovered')).toBe(false);
    expect(canTransition('writing_back', 'context_pushed')).toBe(false);
    for (const s of SYNC_STATES) expect(canTransition(s, s)).toBe(false);
  });

  it('lets every active state fail, and only an operator replay leave failed or skipped', () => {
    for (const s of ACTIVE_SYNC_STATES) expect(canTransition(s, 'failed')).toBe(true);
    expect(nextSyncStates('failed')).toEqual(['awaiting_analysis', 'discovered']);
    expect(nextSyncStates('skipped')).toEqual(['discovered']);
    expect(canTransition('written_back', 'failed')).toBe(false);
  });

  it('names every state in the table and only those', () => {
    for (const s of SYNC_STATES) {
      expect(isSyncState(s)).toBe(true);
      for (const next of nextSyncStates(s)) expect(isSyncState(next)).toBe(true);
    }
    expect(isSyncState('done')).toBe(false);
  });

  it('throws IllegalTransitionError with both states, also for an unknown stored state', () => {
    expect(() => assertTransition('call_1', 'written_back', 'discovered')).toThrow(IllegalTransitionError);
    expect(() => assertTransition('call_1', 'written_back', 'discovered')).toThrow(
      'call call_1: sync state cannot move from written_back to discovered',
    );
    expect(() => assertTransition('call_1', 'bogus', 'failed')).toThrow(IllegalTransitionError);
    expect(() => assertTransition('call_1', 'discovered', 'skipped')).not.toThrow();
  });
});

describe('syncPath', () => {
  it('gives the table’s shortest way, [] when there already, each step one the table allows', () => {
    expect(syncPath('discovered', 'written_back')).toEqual(['writing_back', 'written_back']);
    expect(syncPath('written_back', 'writing_back')).toEqual(['awaiting_analysis', 'writing_back']);
    expect(syncPath('failed', 'writing_back')).toEqual(['awaiting_analysis', 'writing_back']);
    expect(syncPath('skipped', 'writing_back')).toEqual(['discovered', 'writing_back']);
    expect(syncPath('awaiting_analysis', 'awaiting_analysis')).toEqual([]);
    // Every state reaches every other (ends through an operator's replay).
    expect(syncPath('writing_back', 'context_pushed')).toEqual(['skipped', 'discovered', 'context_pushed']);
    for (const from of SYNC_STATES) {
      for (const to of SYNC_STATES) {
        const path = syncPath(from, to)!;
        expect(path.at(-1) ?? from).toBe(to);
        path.forEach((s, i) => expect(canTransition(i === 0 ? from : path[i - 1]!, s)).toBe(true));
      }
    }
  });

  it('lets every active state end directly, writing_back too (a retry that finds nothing to write)', () => {
    expect(canTransition('writing_back', 'skipped')).toBe(true);
    for (const s of ACTIVE_SYNC_STATES) {
      expect(isEndState(s)).toBe(false);
      expect(syncPath(s, 'skipped')).toEqual(['skipped']);
      expect(syncPath(s, 'failed')).toEqual(['failed']);
    }
    expect(SYNC_STATES.filter(isEndState)).toEqual(['written_back', 'failed', 'skipped']);
  });

  it('puts a replayed call where its write-back resumes, and leaves an active one', () => {
    expect(replayPath('failed')).toEqual(['awaiting_analysis']);
    expect(replayPath('written_back')).toEqual(['awaiting_analysis']);
    expect(replayPath('skipped')).toEqual(['discovered']);
    for (const s of ACTIVE_SYNC_STATES) expect(replayPath(s)).toEqual([]);
  });
});
