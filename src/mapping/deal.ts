import type { DealWrite } from '../crm/types.js';
import { aggregateDeal, callViews, type DealCallFacts } from '../deals/aggregate.js';
import { evaluateFields, requiredMissing, timeBindings } from './evaluate.js';
import type { DealTarget, Mapping } from './types.js';
import { crmScalar } from './writeback.js';

export interface DealInput {
  dealId: string;
  /** Every synced call of the deal, in any order. */
  calls: DealCallFacts[];
  now?: number | undefined;
  warnings?: string[] | undefined;
}

/** The `deal` section when it is on, else null. */
export function dealTarget(mapping: Mapping): DealTarget | null {
  return mapping.deal?.enabled ? mapping.deal : null;
}

/**
 * The deal's signal fields as CRM properties. A field that comes out empty is sent as null, which
 * clears it: the deal must show what its calls say now, not a value an earlier call left.
 */
export async function buildDealWrite(mapping: Mapping, input: DealInput): Promise<DealWrite> {
  const target = mapping.deal;
  if (!target) throw new Error('the mapping has no deal section');
  const doc = {
    deal: { id: input.dealId },
    signals: aggregateDeal(input.calls, target.averageOf),
    calls: callViews(input.calls),
  };
  const result = await evaluateFields(
    target.fields,
    doc,
    timeBindings(input.now),
    input.dealId,
    input.warnings,
  );
  if (result.missing.length > 0) throw requiredMissing(mapping.file, input.dealId, result.missing);
  const properties: DealWrite['properties'] = {};
  for (const field of target.fields) {
    const value = result.values[field.name];
    properties[field.name] = value === undefined ? null : crmScalar(value);
  }
  return { dealId: input.dealId, properties };
}
