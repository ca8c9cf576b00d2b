import { describe, expect, it } from 'vitest';
import { FIGURES, figureRow, isMiss, missingRows } from '../../bench/targets.js';
import { slopePerHour } from '../../bench/worker/stats.js';

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
    const soakFigures = Object.values(FIGURES).filter((f) => f.soak).length;
    const rows = missingRows(new Set([FIGURES.acksPg.metric]), () => 'not run');
    expect(rows).toHaveLength(Object.keys(FIGURES).length - soakFigures - 1);
    expect(rows.every(isMiss)).toBe(true);
  });

  it('reports the soak figures only in the soak run, and judges the slope against 5 MB/h', () => {
    expect(soakFiguresOf(missingRows(new Set(), () => 'not run'))).toEqual([]);
    const soak = missingRows(new Set([FIGURES.soakSlopePg.metric]), () => 'not run', true);
    expect(soak.map((r) => r[0])).toEqual([FIGURES.soakSlopeEmbedded.metric]);
    expect(figureRow('soakSlopePg', 4.9, '')[3]).toBe('pass');
    expect(figureRow('soakSlopePg', 5.1, '')[3]).toBe('FAIL');
  });

  it('fits the RSS slope per hour through the samples', () => {
    const minutes = Array.from({ length: 20 }, (_, i) => 15 + i);
    const line = minutes.map((m) => ({ hours: m / 60, value: 100 + 12 * (m / 60) }));
    expect(slopePerHour(line)).toBeCloseTo(12, 6);
    // Noise symmetric about the middle of the window does not tilt the line.
    const noisy = line.map((p, i) => ({ ...p, value: p.value + [40, -40, -40, 40][i % 4]! }));
    expect(slopePerHour(noisy)).toBeCloseTo(12, 6);
    expect(slopePerHour(line.slice(0, 1))).toBeNaN();
  });
});

function soakFiguresOf(rows: string[][]): string[] {
  const soak = new Set(
    Object.values(FIGURES)
      .filter((f) => f.soak)
      .map((f) => f.metric),
  );
  return rows.map((r) => r[0]!).filter((m) => soak.has(m));
}
