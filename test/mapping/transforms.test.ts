import { describe, expect, it } from 'vitest';
import { parseMapping } from '../../src/mapping/load.js';
import { applyTransforms, coerce, toTime, type Transform } from '../../src/mapping/transforms.js';
import { buildActivity } from '../../src/mapping/writeback.js';
import { analysis, call, lookupFor, minimalMapping } from './helpers.js';

const t = (...steps: Transform[]) => steps;

describe('transforms', () => {
  it.each([
    ['date', '2025-03-04T23:30:00-02:00', '2025-03-05'],
    ['date', '1751328000000', '2025-07-01'],
    ['datetime', '2025-03-04T15:30:45Z', '2025-03-04 15:30 UTC'],
    ['iso', 1741102200000, '2025-03-04T15:30:00.000Z'],
    ['iso', '2025-03-31', '2025-03-31T00:00:00.000Z'],
    ['epoch_ms', '2025-03-04T15:30:00Z', 1741102200000],
    ['upper', 'Closed Won', 'CLOSED WON'],
    ['lower', 'Closed Won', 'closed won'],
    ['html', 'A & B <x>\n"q" it\'s', 'A &amp; B &lt;x&gt;<br>&quot;q&quot; it&#39;s'],
    ['text', '<p>Hi &amp; welcome</p><p>Line<br/>two</p>', 'Hi & welcome\nLine\ntwo'],
  ] as const)('format %s: %j -> %j', (format, input, expected) => {
    expect(applyTransforms(input, t({ kind: 'format', format }))).toEqual(expected);
  });

  it('leaves a value that is not a time unchanged by date formats', () => {
    expect(applyTransforms('soon', t({ kind: 'format', format: 'date' }))).toBe('soon');
    expect(toTime('')).toBeNull();
  });

  it('rounds numbers and numeric text, leaves other text alone', () => {
    expect(applyTransforms(48000.456, t({ kind: 'round', digits: 2 }))).toBe(48000.46);
    expect(applyTransforms('12.5', t({ kind: 'round', digits: 0 }))).toBe(13);
    expect(applyTransforms('n/a', t({ kind: 'round', digits: 0 }))).toBe('n/a');
  });

  it('joins arrays, skipping empty items, and leaves non-arrays alone', () => {
    expect(applyTransforms(['a', null, 'b', ''], t({ kind: 'join', separator: '; ' }))).toBe('a; b');
    expect(applyTransforms('a', t({ kind: 'join', separator: '; ' }))).toBe('a');
  });

  it('uses the default for null, missing, blank and empty list, not for 0 or false', () => {
    const d = t({ kind: 'default', value: 'n/a' });
    expect(applyTransforms(null, d)).toBe('n/a');
    expect(applyTransforms(undefined, d)).toBe('n/a');
    expect(applyTransforms('  ', d)).toBe('n/a');
    expect(applyTransforms([], d)).toBe('n/a');
    expect(applyTransforms(0, d)).toBe(0);
    expect(applyTransforms(false, d)).toBe(false);
  });

  it('truncates to at most max characters with an ellipsis, counting code points', () => {
    expect(applyTransforms('abcdefgh', t({ kind: 'truncate', max: 5 }))).toBe('abcd…');
    expect(applyTransforms('abcde', t({ kind: 'truncate', max: 5 }))).toBe('abcde');
    expect(applyTransforms('😀😀😀😀', t({ kind: 'truncate', max: 3 }))).toBe('😀😀…');
  });

  it('maps values through a table, passing others through', () => {
    const m = t({ kind: 'map', table: { closedwon: 'Won', '1': 'one' } });
    expect(applyTransforms('closedwon', m)).toBe('Won');
    expect(applyTransforms(1, m)).toBe('one');
    expect(applyTransforms('open', m)).toBe('open');
  });

  it('applies steps in order', () => {
    const steps = t(
      { kind: 'default', value: 'unknown' },
      { kind: 'format', format: 'upper' },
      { kind: 'truncate', max: 4 },
    );
    expect(applyTransforms(null, steps)).toBe('UNK…');
  });

  it('coerces types, keeps empties null and reports what does not convert', () => {
    expect(coerce('42', 'number')).toEqual({ ok: true, value: 42 });
    expect(coerce(true, 'number')).toEqual({ ok: true, value: 1 });
    expect(coerce('abc', 'number')).toEqual({
      ok: false,
      message: 'expected a number, got text of 3 character(s)',
    });
    expect(coerce(1845000, 'string')).toEqual({ ok: true, value: '1845000' });
    expect(coerce(['a', 'b'], 'string')).toEqual({ ok: true, value: 'a, b' });
    expect(coerce('Yes', 'boolean')).toEqual({ ok: true, value: true });
    expect(coerce('false', 'boolean')).toEqual({ ok: true, value: false });
    expect(coerce(0, 'boolean')).toEqual({ ok: true, value: false });
    expect(coerce('maybe', 'boolean').ok).toBe(false);
    expect(coerce('', 'number')).toEqual({ ok: true, value: null });
  });
});

describe('transforms in a mapping file', () => {
  it('runs every transform from YAML through the engine', async () => {
    const text = minimalMapping(
      [
        '      d: { source: call.created_at, transform: [{ format: date }] }',
        '      e: { source: call.created_at, transform: [{ format: epoch_ms }] }',
        '      r: { source: "\'7.25\'", transform: [{ round: 1 }], type: number }',
        '      j: { source: analysis.next_steps, transform: [{ join: " | " }] }',
        '      n: { source: call.nothing, transform: [{ default: none }] }',
        '      tr: { source: analysis.summary, transform: [{ truncate: 10 }] }',
        '      m: { source: call.platform, transform: [{ map: { zoom: Zoom Meetings } }, { format: upper }] }',
        '      b: { source: "\'yes\'", type: boolean }',
        '      crmsync_call_id: { source: "\'ignored: the id field is always the call id\'" }',
      ].join('\n'),
    );
    const mapping = parseMapping(text, 'inline.yaml');
    const write = await buildActivity(mapping, {
      call: call(),
      analysis: analysis(),
      followups: [],
      lookup: lookupFor('hubspot'),
    });
    expect(write.properties).toEqual({
      d: '2025-03-04',
      e: 1741102200000,
      r: 7.3,
      j: 'Send SOC 2 report | Book pricing review',
      n: 'none',
      tr: 'Dana want…',
      m: 'ZOOM MEETINGS',
      b: true,
      crmsync_call_id: 'call_01HZX4',
    });
  });

  it('answers $now() from the injected time', async () => {
    const mapping = parseMapping(minimalMapping('      at: { source: $now() }'), 'inline.yaml');
    const input = { call: call(), analysis: null, followups: [], lookup: lookupFor('hubspot') };
    const write = await buildActivity(mapping, { ...input, now: Date.parse('2030-01-02T03:04:05Z') });
    expect(write.properties.at).toBe('2030-01-02T03:04:05.000Z');
  });
});
