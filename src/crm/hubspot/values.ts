/**
 * Property values as HubSpot takes them (pure): every value is a string on the wire, `null`
 * clears the property (sent as ""), and text longer than a property holds is cut, never rejected.
 */
export type WriteValue = string | number | boolean | null;

/** HubSpot string properties hold at most 65,536 characters; the definitions carry no length. */
export const HUBSPOT_MAX_STRING_LENGTH = 65_536;

export function toHubSpotProperties(
  props: Record<string, WriteValue>,
  maxLengths: Readonly<Record<string, number>> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(props)) {
    out[name] = truncate(toWire(value), maxLengths[name] ?? HUBSPOT_MAX_STRING_LENGTH);
  }
  return out;
}

function toWire(value: WriteValue): string {
  if (value === null) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  return String(value);
}

/** Cuts to `max` UTF-16 units without splitting a surrogate pair. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // a high surrogate whose pair would be cut off
  return text.slice(0, end);
}
