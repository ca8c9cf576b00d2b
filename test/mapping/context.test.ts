import { describe, expect, it } from 'vitest';
import type { CrmLookup } from '../../src/crm/types.js';
import { buildContext, capContext, CONTEXT_MAX_BYTES, contextBytes } from '../../src/mapping/context.js';
import { parseMapping } from '../../src/mapping/load.js';
import type { ContextBody } from '../../src/mapping/types.js';
import { call, minimalMapping } from './helpers.js';

const deal = (i: number, notes: string) => ({
  type: 'deal' as const,
  id: `d${i}`,
  properties: { dealname: `Deal ${i}`, description: notes },
});

describe('the 64 KiB context cap', () => {
  it('keeps a body that fits as it is', () => {
    const body: ContextBody = {
      source: 'hubspot',
      contact: { a: 1 },
      company: {},
      deals: [{ id: 'd1' }],
      custom: { x: 'y' },
    };
    expect(capContext(body)).toEqual(body);
  });

  it('drops deals from the last first, then custom values, and never exceeds 64 KiB', async () => {
    const mapping = parseMapping(
      minimalMapping(
        '      x: { source: call.id }',
        [
          '  deal_rule: { limit: 10 }',
          '  contact: { email: { source: contact.email } }',
          '  deals: { id: { source: deal.id }, notes: { source: deal.description } }',
          "  custom: { first: { source: \"$pad('', 20000, 'a')\" }, second: { source: \"$pad('', 20000, 'b')\" } }",
        ].join('\n'),
      ),
      'inline.yaml',
    );
    const lookup: CrmLookup = {
      contact: { type: 'contact', id: 'c1', properties: { email: 'dana@northwind.example' } },
      company: null,
      deals: Array.from({ length: 6 }, (_, i) => deal(i + 1, 'n'.repeat(9000))),
      owner: null,
      matchedBy: 'email',
    };
    const body = await buildContext(mapping, { call: call(), lookup });
    expect(contextBytes(body)).toBeLessThanOrEqual(CONTEXT_MAX_BYTES);
    // 40 000 bytes of custom values leave room for two 9 000-byte deals: d3..d6 must go.
    expect(body.deals.map((d) => d.id)).toEqual(['d1', 'd2']);
    expect(Object.keys(body.custom)).toEqual(['first', 'second']);
    expect(body.contact).toEqual({ email: 'dana@northwind.example' });
  });

  it('then drops custom values, then shortens the longest contact or company text', () => {
    const big: ContextBody = {
      source: 'salesforce',
      contact: { name: 'Dana', bio: 'é'.repeat(50_000) },
      company: { name: 'Northwind' },
      deals: [{ id: 'd1', notes: 'x'.repeat(10_000) }],
      custom: { a: 'x'.repeat(10_000), b: 'y'.repeat(10_000) },
    };
    const capped = capContext(big);
    expect(contextBytes(capped)).toBeLessThanOrEqual(CONTEXT_MAX_BYTES);
    expect(contextBytes(capped)).toBeGreaterThan(CONTEXT_MAX_BYTES - 16);
    expect(capped.deals).toEqual([]);
    expect(capped.custom).toEqual({});
    expect(capped.contact.name).toBe('Dana');
    expect(String(capped.contact.bio).endsWith('…')).toBe(true);
    expect(big.deals).toHaveLength(1); // the input is not modified
  });
});
