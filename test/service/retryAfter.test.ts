import { describe, expect, it } from 'vitest';
import { parseHttpDate, parseRetryAfter } from '../../src/service/retryAfter.js';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0); // Thu, 01 Jan 2026 12:00:00 GMT

describe('parseRetryAfter', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('12', NOW)).toBe(12_000);
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter(' 7 ', NOW)).toBe(7_000);
    expect(parseRetryAfter('86400', NOW)).toBe(86_400_000);
  });

  it('reads fractional seconds, rounding up to the next millisecond', () => {
    expect(parseRetryAfter('1.5', NOW)).toBe(1_500);
    expect(parseRetryAfter('0.25', NOW)).toBe(250);
    expect(parseRetryAfter('.5', NOW)).toBe(500);
    expect(parseRetryAfter('0.0001', NOW)).toBe(1);
  });

  it('reads an IMF-fixdate relative to now', () => {
    expect(parseRetryAfter('Thu, 01 Jan 2026 12:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Fri, 02 Jan 2026 00:00:00 GMT', NOW)).toBe(12 * 3600_000);
  });

  it('reads the obsolete RFC 850 form, two-digit year in the right century', () => {
    expect(parseRetryAfter('Thursday, 01-Jan-26 12:01:00 GMT', NOW)).toBe(60_000);
    // More than 50 years ahead means the previous century: 1994, in the past, so no wait.
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW)).toBe(Date.UTC(1994, 10, 6, 8, 49, 37));
  });

  it('reads the asctime form, with a space-padded day', () => {
    expect(parseRetryAfter('Thu Jan  1 12:00:05 2026', NOW)).toBe(5_000);
    expect(parseHttpDate('Sun Nov 16 08:49:37 2025', NOW)).toBe(Date.UTC(2025, 10, 16, 8, 49, 37));
  });

  it('gives 0 for a date in the past', () => {
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:59:59 GMT', NOW)).toBe(0);
  });

  it('takes the first of repeated headers', () => {
    expect(parseRetryAfter(['3', '9'], NOW)).toBe(3_000);
  });

  it('gives undefined when the header is missing or empty', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter('', NOW)).toBeUndefined();
    expect(parseRetryAfter('   ', NOW)).toBeUndefined();
    expect(parseRetryAfter([], NOW)).toBeUndefined();
  });

  it.each([
    ['-5'],
    ['+5'],
    ['1e3'],
    ['12s'],
    ['1.'],
    ['1,5'],
    ['0x10'],
    ['Infinity'],
    ['NaN'],
    ['soon'],
    ['2026-01-01T12:00:30Z'],
    ['Thu, 01 Jan 2026 12:00:30 UTC'],
    ['Thu, 1 Jan 2026 12:00:30 GMT'],
    ['Thu, 31 Feb 2026 12:00:30 GMT'],
    ['Thu, 01 Foo 2026 12:00:30 GMT'],
    ['Thu, 01 Jan 2026 25:00:00 GMT'],
    ['Thu, 01 Jan 2026 12:61:00 GMT'],
    ['Xyz, 01 Jan 2026 12:00:30 GMT'],
    ['Thu Jan 1 12:00:05 2026'],
  ])('gives undefined for garbage %j', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });

  it('never returns a non-finite wait for absurdly long numbers', () => {
    expect(parseRetryAfter('9'.repeat(400), NOW)).toBeUndefined();
  });
});
