/**
 * Whether a deal as the CRM shows it already holds the values crm-sync would write (pure). The
 * CRMs hand values back in their own shapes: HubSpot every property as text ("88", "" for unset),
 * Salesforce numbers as numbers and empty fields as null; both compare equal to what was sent.
 */
export function showsValues(
  shown: Record<string, unknown>,
  values: Record<string, string | number | boolean | null>,
): boolean {
  return Object.entries(values).every(([name, value]) => same(shown[name], value));
}

function same(shown: unknown, sent: string | number | boolean | null): boolean {
  if (isBlank(sent) || isBlank(shown)) return isBlank(sent) && isBlank(shown);
  if (typeof sent === 'number') return Number(shown) === sent;
  return String(shown) === String(sent);
}

const isBlank = (v: unknown) => v === null || v === undefined || v === '';
