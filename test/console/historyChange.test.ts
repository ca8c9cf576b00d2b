import { describe, expect, it } from 'vitest';
import { historyChange } from '../../src/console/historyChange.js';
import { rematchDetail } from '../../src/store/syncEventRepo.js';

describe("a call timeline's change cell", () => {
  it('names creation, moves, failed tries and rematch moves apart', () => {
    expect(historyChange({ fromState: null, toState: 'discovered', detail: null })).toBe('→ discovered');
    expect(historyChange({ fromState: 'writing_back', toState: 'written_back', detail: 'x' })).toBe(
      'writing_back → written_back',
    );
    expect(historyChange({ fromState: 'writing_back', toState: 'writing_back', detail: 'CRM 503' })).toBe(
      'writing_back (try failed)',
    );
    const moved = {
      fromState: 'written_back',
      toState: 'written_back',
      detail: rematchDetail('deal [1] → [2]'),
    };
    expect(historyChange(moved)).toBe('written_back (rematched)');
  });
});
