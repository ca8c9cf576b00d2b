import { describe, expect, it } from 'vitest';
// @ts-expect-error plain JS without declarations: it must run on any Node, before tsx loads.
import { unsupportedNode } from '../../bin/node-check.js';

describe('the Node.js version check of bin/crm-sync.js', () => {
  it('refuses Node before 22.19 with a plain message, and accepts 22.19+ and 24', () => {
    expect(unsupportedNode('20.20.2')).toBe(
      'crm-sync needs Node.js 22.19 or later (24 LTS recommended); this is v20.20.2.',
    );
    expect(unsupportedNode('22.18.0')).toMatch(/needs Node\.js 22\.19/);
    expect(unsupportedNode('22.19.0')).toBeNull();
    expect(unsupportedNode('v24.21.0')).toBeNull();
  });
});
