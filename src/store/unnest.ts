import { Prisma } from '../generated/prisma/client.js';

/**
 * Rows as a relation of one array parameter per column (`unnest`), for the multi-row statements
 * on hot paths: the statement's text then does not depend on how many rows it carries, so
 * PostgreSQL can keep it prepared (see `PREPARED` below) instead of parsing and planning it for
 * every batch, which was half of PostgreSQL's time per webhook ack (docs/performance.md).
 */
export type ColumnType = 'text' | 'int' | 'bigint' | 'boolean' | 'timestamptz' | 'jsonb';
export type Columns = readonly (readonly [name: string, type: ColumnType])[];

/** `a, b, c`: the names of `columns`, for INSERT and SELECT lists. */
export function columnNames(columns: Columns): Prisma.Sql {
  return Prisma.raw(columns.map(([name]) => name).join(', '));
}

/** `unnest($1::text[], ...) AS alias (a, b, ...)`; each row holds one value per column, in order. */
export function unnestRows(
  columns: Columns,
  rows: readonly (readonly unknown[])[],
  alias: string,
): Prisma.Sql {
  const arrays = columns.map(([, type], i) => {
    const values = rows.map((row) => toParam(row[i], type));
    return Prisma.sql`${values}::${Prisma.raw(type)}[]`;
  });
  return Prisma.sql`unnest(${Prisma.join(arrays)}) AS ${Prisma.raw(alias)} (${columnNames(columns)})`;
}

// Elements go as text PostgreSQL parses by the column's type: a Date as ISO 8601 with its zone,
// JSON as its text.
function toParam(value: unknown, type: ColumnType): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  if (type === 'jsonb') return JSON.stringify(value);
  if (typeof value === 'bigint') return String(value);
  return value;
}

/**
 * Marks a statement to keep prepared on its connection (the PostgreSQL driver adapter names it by
 * its text, src/store/database.ts). Only statements whose text is fixed may carry it: each
 * distinct text stays prepared for the connection's life.
 */
export const PREPARED = Prisma.raw('/* prepared */');

export function isPrepared(sqlText: string): boolean {
  return sqlText.startsWith('/* prepared */');
}
