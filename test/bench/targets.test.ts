import { describe, expect, it } from 'vitest';
import { FIGURES, figureRow, isMiss, missingRows } from '../../bench/targets.js';

describe('bench targets (npm run bench --strict)', () => {
  it('passes a value on the right side of its target and fails one on the wrong side', () => {
    expect(figureRow('rssIdlePg', 119.6, '')).toEqual([
      FIGURES.rssIdlePg.metric,
      '120 MB',
      '<= 120 MB',
      'pass',
      '',
    ]);
    expect(figureRow('rssIdlePg', 121, '')[3]).toBe('FAIL');
    expect(figureRow('throughputPg', 100, '')[3]).toBe('pass');
    expect(figureRow('throughputPg', 99.9, '')[3]).toBe('FAIL');
    expect(figureRow('burstUtilisationLoss', 0.0167, '')[1]).toBe('1.67 %');
    expect(figureRow('burstUtilisationLoss', 0.021, '')[3]).toBe('FAIL');
  });

  it('counts a figure nobody measured as a miss, and lists every unreported figure', () => {
    const missing = figureRow('acksPg', null, 'no PostgreSQL');
    expect(missing[3]).toBe('MISSING');
    expect(isMiss(missing)).toBe(true);
    expect(isMiss(figureRow('acksPg', 2_000, ''))).toBe(false);
    expect(isMiss(figureRow('acksPg', 20, ''))).toBe(true);
    const rows = missingRows(new Set([FIGURES.acksPg.metric]), () => 'not run');
    expect(rows).toHaveLength(Object.keys(FIGURES).length - 1);
    expect(rows.every(isMiss)).toBe(true);
  });
});
