import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { draftIdOfKey, draftKey } from '../../src/crm/draftKey.js';

describe('draft keys (call id and draft id)', () => {
  it('reads back the draft id of a key, and takes an older bare draft id as it is', () => {
    expect(draftKey('call_1', 'fu_1')).toBe('call_1:fu_1');
    expect(draftIdOfKey('call_1:fu_1', 'call_1')).toBe('fu_1');
    expect(draftIdOfKey('fu_1', 'call_1')).toBe('fu_1');
  });

  it('gives two different (call, draft) pairs two different keys, whatever the ids hold', () => {
    const id = fc.string({ unit: fc.constantFrom('a', ':', '\\', 'b'), maxLength: 6 });
    fc.assert(
      fc.property(id, id, id, id, (c1, d1, c2, d2) => {
        fc.pre(c1 !== c2 || d1 !== d2);
        expect(draftKey(c1, d1)).not.toBe(draftKey(c2, d2));
        expect(draftIdOfKey(draftKey(c1, d1), c1)).toBe(d1);
      }),
    );
  });
});
