/**
 * `GET /v1/calls` paging (CONTRACT.md "GET /v1/calls"): calls ordered by created_at then id; the
 * cursor names the last call returned, so the last page's cursor resumes at calls created later.
 */
import type { CallRecord } from './types.js';

export interface CursorPosition {
  createdAtMs: number;
  id: string;
}

export interface ListQuery {
  limit: number;
  cursor: CursorPosition | null;
  /** The cursor exactly as sent, echoed back when a page comes out empty. */
  rawCursor: string | null;
  createdAfterMs?: number;
  createdBeforeMs?: number;
  status?: string;
}

export interface ListPage {
  data: CallRecord[];
  next_cursor: string | null;
  has_more: boolean;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; code: string; message: string };

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;

/** Opaque to clients: base64url of a small JSON position. */
export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify({ t: position.createdAtMs, id: position.id })).toString('base64url');
}

export function decodeCursor(raw: string): CursorPosition | null {
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) return null;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return null;
    const { t, id } = parsed as { t?: unknown; id?: unknown };
    if (typeof t !== 'number' || !Number.isFinite(t) || typeof id !== 'string') return null;
    return { createdAtMs: t, id };
  } catch {
    return null;
  }
}

/** An ISO 8601 timestamp with a date and a time (a bare number or word is refused). */
export function parseTimestamp(value: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** Optional timestamp parameters, each read into its key (`{ from: 'fromMs' }`); absent ones are left out. */
export function parseTimestampParams<K extends string>(
  params: URLSearchParams,
  keys: Readonly<Record<string, K>>,
): ParseResult<Partial<Record<K, number>>> {
  const value: Partial<Record<K, number>> = {};
  for (const [name, key] of Object.entries(keys)) {
    const text = params.get(name);
    if (text === null) continue;
    const ms = parseTimestamp(text);
    if (ms === null)
      return { ok: false, code: 'invalid_parameter', message: `${name} must be an ISO 8601 timestamp` };
    value[key] = ms;
  }
  return { ok: true, value };
}

export function parseListQuery(params: URLSearchParams): ParseResult<ListQuery> {
  const limitText = params.get('limit');
  let limit = DEFAULT_LIMIT;
  if (limitText !== null) {
    if (!/^\d+$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_LIMIT) {
      return { ok: false, code: 'invalid_limit', message: `limit must be an integer from 1 to ${MAX_LIMIT}` };
    }
    limit = Number(limitText);
  }
  const rawCursor = params.get('cursor') || null;
  const cursor = rawCursor === null ? null : decodeCursor(rawCursor);
  if (rawCursor !== null && cursor === null) {
    return { ok: false, code: 'invalid_cursor', message: 'cursor is not one this API issued' };
  }
  const dates = parseTimestampParams(params, {
    created_after: 'createdAfterMs',
    created_before: 'createdBeforeMs',
  });
  if (!dates.ok) return dates;
  const query: ListQuery = { limit, cursor, rawCursor, ...dates.value };
  const status = params.get('status');
  if (status) query.status = status;
  return { ok: true, value: query };
}

export function compareCalls(a: CursorPosition, b: CursorPosition): number {
  return a.createdAtMs - b.createdAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** One page from `calls`, which must be sorted by `compareCalls`. Both date filters are exclusive. */
export function listPage(calls: readonly CallRecord[], query: ListQuery): ListPage {
  const matches = calls.filter(
    (c) =>
      (query.cursor === null || compareCalls(c, query.cursor) > 0) &&
      (query.createdAfterMs === undefined || c.createdAtMs > query.createdAfterMs) &&
      (query.createdBeforeMs === undefined || c.createdAtMs < query.createdBeforeMs) &&
      (query.status === undefined || c.status === query.status),
  );
  const data = matches.slice(0, query.limit);
  const last = data[data.length - 1];
  return {
    data,
    next_cursor: last ? encodeCursor(last) : query.rawCursor,
    has_more: matches.length > data.length,
  };
}
