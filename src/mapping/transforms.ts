import type { TransformSpec, ValueType } from './schema.js';

/**
 * The transform steps of a mapped field and its type coercion: pure functions of a value. A
 * step that does not apply to the value (e.g. `round` on text) leaves it as it is, so a chain
 * never throws; only `type: number` on non-numeric text does, naming the value.
 */

export type Transform =
  | { kind: 'format'; format: NonNullable<TransformSpec['format']> }
  | { kind: 'round'; digits: number }
  | { kind: 'join'; separator: string }
  | { kind: 'default'; value: string | number | boolean | null }
  | { kind: 'truncate'; max: number }
  | { kind: 'map'; table: Record<string, string | number | boolean | null> };

/** Turns the schema's one-key objects into tagged steps (the schema guarantees exactly one key). */
export function toTransform(spec: TransformSpec): Transform {
  if (spec.format !== undefined) return { kind: 'format', format: spec.format };
  if (spec.round !== undefined) return { kind: 'round', digits: spec.round };
  if (spec.join !== undefined) return { kind: 'join', separator: spec.join };
  if (spec.truncate !== undefined) return { kind: 'truncate', max: spec.truncate };
  if (spec.map !== undefined) return { kind: 'map', table: spec.map };
  return { kind: 'default', value: spec.default ?? null };
}

/** Null, undefined, blank text and empty arrays count as "no value" (for `default` and `required`). */
export function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0;
  return false;
}

export function applyTransforms(value: unknown, steps: readonly Transform[]): unknown {
  return steps.reduce<unknown>((v, step) => applyOne(v, step), value);
}

function applyOne(value: unknown, step: Transform): unknown {
  if (step.kind === 'default') return isEmpty(value) ? step.value : value;
  if (value === null || value === undefined) return value;
  switch (step.kind) {
    case 'join':
      return Array.isArray(value)
        ? value
            .filter((v) => !isEmpty(v))
            .map(stringify)
            .join(step.separator)
        : value;
    case 'map': {
      const key = stringify(value);
      return Object.hasOwn(step.table, key) ? step.table[key] : value;
    }
    case 'round': {
      const n = toNumber(value);
      if (n === null) return value;
      const factor = 10 ** step.digits;
      return Math.round(n * factor) / factor;
    }
    case 'truncate': {
      const text = typeof value === 'string' ? value : stringify(value);
      const chars = [...text];
      return chars.length <= step.max ? text : chars.slice(0, step.max - 1).join('') + '…';
    }
    case 'format':
      return formatValue(value, step.format);
  }
}

function formatValue(value: unknown, format: Extract<Transform, { kind: 'format' }>['format']): unknown {
  switch (format) {
    case 'upper':
      return stringify(value).toUpperCase();
    case 'lower':
      return stringify(value).toLowerCase();
    case 'html':
      return escapeHtml(stringify(value)).replace(/\r?\n/g, '<br>');
    case 'text':
      return htmlToText(stringify(value));
    default: {
      const time = toTime(value);
      if (time === null) return value;
      const iso = new Date(time).toISOString();
      if (format === 'epoch_ms') return time;
      if (format === 'iso') return iso;
      if (format === 'date') return iso.slice(0, 10);
      return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
    }
  }
}

/**
 * Reads a point in time from an ISO 8601 string, a date-only string (midnight UTC), epoch
 * milliseconds as a number or digit string (HubSpot sends dates as such strings), or a Date.
 */
export function toTime(value: unknown): number | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.getTime();
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string' || value.trim() === '') return null;
  const text = value.trim();
  if (/^-?\d{9,}$/.test(text)) return Number(text);
  const t = Date.parse(text);
  return Number.isNaN(t) ? null : t;
}

/** A number from a number or numeric text (CRMs often send amounts as text); null otherwise. */
export function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value.trim());
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

export type Coerced = { ok: true; value: unknown } | { ok: false; message: string };

/** Applies a field's `type`; empty values stay null, unconvertible ones are reported. */
export function coerce(value: unknown, type: ValueType | undefined): Coerced {
  if (type === undefined || isEmpty(value)) return { ok: true, value: isEmpty(value) ? null : value };
  if (type === 'string') return { ok: true, value: stringify(value) };
  if (type === 'number') {
    const n = typeof value === 'boolean' ? Number(value) : toNumber(value);
    return n === null
      ? { ok: false, message: `expected a number, got ${kindOf(value)}` }
      : { ok: true, value: n };
  }
  if (typeof value === 'boolean') return { ok: true, value };
  if (typeof value === 'number') return { ok: true, value: value !== 0 };
  const text = stringify(value).trim().toLowerCase();
  if (['true', 'yes', '1', 'y'].includes(text)) return { ok: true, value: true };
  if (['false', 'no', '0', 'n'].includes(text)) return { ok: true, value: false };
  return { ok: false, message: `expected true or false, got ${kindOf(value)}` };
}

/** What a value is, without the value itself: it may be personal data, and messages end up in logs. */
function kindOf(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `text of ${value.length} character(s)`;
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Text for any value: arrays joined with ", ", objects as JSON. */
export function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (Array.isArray(value))
    return value
      .filter((v) => !isEmpty(v))
      .map(stringify)
      .join(', ');
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  '#39': "'",
  apos: "'",
  nbsp: ' ',
};

/** Plain text from simple HTML: line breaks for <br> and block ends, tags dropped, common entities decoded. */
function htmlToText(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|li|h[1-6])>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, name: string) => ENTITIES[name] ?? '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
