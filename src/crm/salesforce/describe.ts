/** The parts of a describe result the adapter uses, keyed by lower-cased field name. */
export interface FieldInfo {
  name: string;
  type: string;
  length: number;
  createable: boolean;
  updateable: boolean;
  externalId: boolean;
  unique: boolean;
  custom: boolean;
}

export interface ObjectInfo {
  name: string;
  fields: Map<string, FieldInfo>;
}

interface RawDescribe {
  name: string;
  fields: Partial<FieldInfo>[];
}

export function toObjectInfo(raw: RawDescribe): ObjectInfo {
  const fields = new Map<string, FieldInfo>();
  for (const f of raw.fields) {
    if (!f.name) continue;
    fields.set(f.name.toLowerCase(), {
      name: f.name,
      type: String(f.type ?? 'string'),
      length: Number(f.length ?? 0),
      createable: f.createable === true,
      updateable: f.updateable === true,
      externalId: f.externalId === true,
      unique: f.unique === true,
      custom: f.custom === true,
    });
  }
  return { name: raw.name, fields };
}

/**
 * Describe results per object, fetched once (a describe costs an API request and changes only
 * when an admin edits the object). `invalidate` after a setup check or a field error.
 */
export class DescribeCache {
  private entries = new Map<string, Promise<ObjectInfo>>();

  constructor(private readonly fetch: (type: string) => Promise<RawDescribe>) {}

  get(type: string): Promise<ObjectInfo> {
    const key = type.toLowerCase();
    let entry = this.entries.get(key);
    if (!entry) {
      entry = this.fetch(type).then(toObjectInfo);
      // A failed describe is not cached: the next write asks again.
      entry.catch(() => this.entries.delete(key));
      this.entries.set(key, entry);
    }
    return entry;
  }

  invalidate(type?: string): void {
    if (type) this.entries.delete(type.toLowerCase());
    else this.entries.clear();
  }
}

const TEXT_TYPES = new Set([
  'string',
  'textarea',
  'email',
  'url',
  'phone',
  'picklist',
  'multipicklist',
  'combobox',
  'encryptedstring',
]);

/**
 * Cuts `value` to at most `max` UTF-16 units, ending with "…" when cut. Never splits a
 * surrogate pair, so the result is also within `max` characters however Salesforce counts.
 */
export function truncateText(value: string, max: number): string {
  if (max <= 0 || value.length <= max) return value;
  let end = max - 1;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${value.slice(0, Math.max(0, end))}…`;
}

/**
 * Fits mapped values to the object's fields: text longer than the field is cut (a long summary
 * must not fail the write). Unknown fields pass through untouched; Salesforce names them.
 */
export function fitToFields(
  obj: ObjectInfo,
  values: Record<string, string | number | boolean | null>,
): { values: Record<string, string | number | boolean | null>; truncated: string[] } {
  const out: Record<string, string | number | boolean | null> = {};
  const truncated: string[] = [];
  for (const [name, value] of Object.entries(values)) {
    const field = obj.fields.get(name.toLowerCase());
    if (
      typeof value === 'string' &&
      field &&
      TEXT_TYPES.has(field.type) &&
      field.length > 0 &&
      value.length > field.length
    ) {
      out[name] = truncateText(value, field.length);
      truncated.push(field.name);
    } else {
      out[name] = value;
    }
  }
  return { values: out, truncated };
}

/** Fields present in `record` that can be set on create but not on update (e.g. Task.TaskSubtype). */
export function createOnlyFields(obj: ObjectInfo, record: Record<string, unknown>): string[] {
  return Object.keys(record).filter((name) => {
    const field = obj.fields.get(name.toLowerCase());
    return field !== undefined && field.createable && !field.updateable;
  });
}
