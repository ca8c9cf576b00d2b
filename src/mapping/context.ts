import { baseDocument, evaluateFields, requiredMissing, timeBindings } from './evaluate.js';
import type { ContextBody, ContextInput, Mapping } from './types.js';

/** CONTRACT.md: the context body is at most 64 KiB. */
export const CONTEXT_MAX_BYTES = 64 * 1024;

/**
 * The body of `POST /v1/calls/:id/context` for one call: contact, company, each open deal (in the
 * order of the deal rule, at most its limit) and custom values. Throws
 * MappingRequiredMissingError when a required field is empty (one error naming them all).
 */
export async function buildContext(mapping: Mapping, input: ContextInput): Promise<ContextBody> {
  const callId = input.call.id;
  const doc = baseDocument(input.call, input.lookup);
  const bindings = timeBindings(input.now);
  const contact = await evaluateFields(mapping.context.contact, doc, bindings, callId, input.warnings);
  const company = await evaluateFields(mapping.context.company, doc, bindings, callId, input.warnings);
  const custom = await evaluateFields(mapping.context.custom, doc, bindings, callId, input.warnings);
  const missing = [...contact.missing, ...company.missing, ...custom.missing];
  const deals: Record<string, unknown>[] = [];
  const dealDocs = (doc.lookup as { deals: unknown[] }).deals.slice(0, mapping.dealRule.limit);
  if (mapping.context.deals.length > 0) {
    for (const deal of dealDocs) {
      const result = await evaluateFields(
        mapping.context.deals,
        { ...doc, deal },
        bindings,
        callId,
        input.warnings,
      );
      missing.push(...result.missing.filter((f) => !missing.includes(f)));
      deals.push(result.values);
    }
  }
  if (missing.length > 0) throw requiredMissing(mapping.file, callId, missing);
  return capContext({
    source: mapping.crm,
    contact: contact.values,
    company: company.values,
    deals,
    custom: custom.values,
  });
}

export function contextBytes(body: ContextBody): number {
  return Buffer.byteLength(JSON.stringify(body), 'utf8');
}

/**
 * Keeps the body within CONTEXT_MAX_BYTES: drops deals from the last (least relevant by the
 * deal rule), then custom values from the last, then shortens the longest text value left.
 */
export function capContext(body: ContextBody, maxBytes = CONTEXT_MAX_BYTES): ContextBody {
  const out: ContextBody = {
    ...body,
    contact: { ...body.contact },
    company: { ...body.company },
    deals: [...body.deals],
    custom: { ...body.custom },
  };
  while (contextBytes(out) > maxBytes && out.deals.length > 0) out.deals.pop();
  const customKeys = Object.keys(out.custom);
  while (contextBytes(out) > maxBytes && customKeys.length > 0) delete out.custom[customKeys.pop() as string];
  while (contextBytes(out) > maxBytes) {
    const longest = longestText(out);
    if (longest === null) break;
    const [target, key, text] = longest;
    target[key] = shorten(text, contextBytes(out) - maxBytes);
  }
  return out;
}

/** Cuts at least `excess` bytes (plus room for the 3-byte ellipsis) off the end of `text`. */
function shorten(text: string, excess: number): string {
  const budget = Buffer.byteLength(text, 'utf8') - excess - 3;
  const chars = Array.from(text);
  let bytes = 0;
  let keep = 0;
  while (keep < chars.length - 1 && bytes + Buffer.byteLength(chars[keep] as string, 'utf8') <= budget) {
    bytes += Buffer.byteLength(chars[keep] as string, 'utf8');
    keep += 1;
  }
  // Always at least one character shorter, so the caller's loop ends.
  return keep > 0 ? `${chars.slice(0, keep).join('')}…` : '';
}

function longestText(body: ContextBody): [Record<string, unknown>, string, string] | null {
  let best: [Record<string, unknown>, string, string] | null = null;
  for (const target of [body.contact, body.company]) {
    for (const [key, value] of Object.entries(target)) {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      if (text !== '' && (best === null || text.length > best[2].length)) best = [target, key, text];
    }
  }
  return best;
}
