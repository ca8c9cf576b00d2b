/**
 * The database's clock, the one clock every process sharing a database compares times on (leases,
 * budget windows, UTC days): a SQL expression a statement reads once (in a CTE) and uses for every
 * decision it makes. Process clocks may be skewed; the database's is the same for all of them.
 */
import { Prisma } from '../generated/prisma/client.js';

/** Gives the SQL expression a statement reads the time from. */
export type DbClock = () => Prisma.Sql;

/** The time the statement reads it (not the transaction's start, which may be long before a lock). */
export const DB_NOW: DbClock = () => Prisma.sql`clock_timestamp()`;

/**
 * A database clock that reads `clock` instead (a FakeClock, or a fixed time): tests drive leases,
 * windows and days through it.
 */
export function dbClockOf(clock: { now(): number } | Date): DbClock {
  return () => Prisma.sql`${new Date(clock instanceof Date ? clock : clock.now())}::timestamptz`;
}

/** The SQL of a millisecond span, for arithmetic on the database's clock. */
export function msInterval(ms: number): Prisma.Sql {
  return Prisma.sql`(${ms}::float8 * interval '1 millisecond')`;
}

/** A timestamptz column or expression as epoch milliseconds (float8), as SQL text. */
export function epochMs(sql: string): string {
  return `(extract(epoch FROM ${sql}) * 1000)::float8`;
}
