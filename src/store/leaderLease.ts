import type { Db } from './database.js';
import { DB_NOW, msInterval, type DbClock } from './dbClock.js';

/**
 * Single-leader election over table leader_lease: whoever holds the unexpired lease named `name`
 * leads (e.g. runs the poll schedule). The holder renews well before expiry; when it dies, another
 * process takes over once the lease has run out. Leases are set and judged on the database's
 * clock (dbClock.ts): processes whose clocks disagree still agree on who leads.
 */
export const DEFAULT_LEASE_MS = 30_000;

export interface LeaseRecord {
  name: string;
  holder: string;
  acquiredAt: Date;
  expiresAt: Date;
}

/**
 * Takes the lease if it is free or expired, or renews it if `holder` already has it. Returns the
 * lease as it now stands: `holder` leads only if `lease.holder === holder`.
 */
export async function tryAcquireLease(
  db: Db,
  input: { name: string; holder: string; ttlMs?: number; dbClock?: DbClock },
): Promise<{ leader: boolean; lease: LeaseRecord | null }> {
  const ttl = msInterval(input.ttlMs ?? DEFAULT_LEASE_MS);
  // One statement, so two contenders cannot both win: the row lock serialises them.
  const rows = await db.$queryRaw<{ name: string; holder: string; acquired_at: Date; expires_at: Date }[]>`
    WITH t AS (SELECT ${(input.dbClock ?? DB_NOW)()} AS now)
    INSERT INTO leader_lease (name, holder, acquired_at, expires_at)
    SELECT ${input.name}, ${input.holder}, t.now, t.now + ${ttl} FROM t
    ON CONFLICT (name) DO UPDATE SET
      holder = EXCLUDED.holder,
      acquired_at = CASE WHEN leader_lease.holder = EXCLUDED.holder
                         THEN leader_lease.acquired_at ELSE EXCLUDED.acquired_at END,
      expires_at = EXCLUDED.expires_at
      WHERE leader_lease.holder = EXCLUDED.holder OR leader_lease.expires_at <= EXCLUDED.acquired_at
    RETURNING name, holder, acquired_at, expires_at`;
  const row = rows[0];
  if (row) {
    return {
      leader: true,
      lease: { name: row.name, holder: row.holder, acquiredAt: row.acquired_at, expiresAt: row.expires_at },
    };
  }
  return { leader: false, lease: await getLease(db, input.name) };
}

export async function getLease(db: Db, name: string): Promise<LeaseRecord | null> {
  const row = await db.leaderLease.findUnique({ where: { name } });
  return row
    ? { name: row.name, holder: row.holder, acquiredAt: row.acquiredAt, expiresAt: row.expiresAt }
    : null;
}

/** Gives the lease up (on shutdown) so a successor need not wait for it to expire. */
export async function releaseLease(db: Db, input: { name: string; holder: string }): Promise<boolean> {
  const { count } = await db.leaderLease.deleteMany({ where: { name: input.name, holder: input.holder } });
  return count === 1;
}
