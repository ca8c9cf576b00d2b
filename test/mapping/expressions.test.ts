import { describe, expect, it } from 'vitest';
import { compileExpression } from '../../src/mapping/expressions.js';

function analyse(source: string) {
  const result = compileExpression(source);
  if (!result.ok) throw new Error(result.message);
  return {
    roots: result.roots.map((r) => r.name).sort(),
    props: result.properties.map((p) => `${p.record}.${p.property}`),
  };
}

describe('reading expressions', () => {
  it('finds root names and record properties, not names relative to an item', () => {
    expect(
      analyse(
        "$join(analysis.objections[handled].(type & ': ' & text), ', ') & contact.firstname & lookup.deals.amount",
      ),
    ).toEqual({ roots: ['analysis', 'contact', 'lookup'], props: ['contact.firstname', 'deal.amount'] });
  });

  it('follows $$ and $ at the root, conditions, blocks and variables', () => {
    expect(
      analyse('($c := company.name; $$.deal.dealstage = "won" ? $c : $.owner.email ?? lead.Status)'),
    ).toEqual({
      roots: ['company', 'deal', 'lead', 'owner'],
      props: ['company.name', 'deal.dealstage', 'owner.email', 'lead.Status'],
    });
  });

  it("reads a deal's owner as owner properties, not as a deal property named owner", () => {
    expect(analyse('deal.owner.email & lookup.deals.owner.Name & deal.owner & deal.ownerid')).toEqual({
      roots: ['deal', 'lookup'],
      props: ['owner.email', 'owner.Name', 'deal.ownerid'],
    });
  });

  it('does not treat names inside a lambda body as roots', () => {
    expect(analyse('$map(analysis.objections, function($o) { $o.type & nothing })')).toEqual({
      roots: ['analysis'],
      props: [],
    });
  });

  it('reports the start of an unknown root name', () => {
    const result = compileExpression("'x' & contcat.email");
    expect(result.ok && result.roots).toEqual([{ name: 'contcat', index: 6 }]);
  });

  it('reports syntax errors with their position', () => {
    expect(compileExpression('contact.(email')).toMatchObject({ ok: false, position: 14 });
  });
});
