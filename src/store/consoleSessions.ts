/**
 * Console sign-ins, kept server side so that one can end: the cookie carries a random id, the
 * console_session table its SHA-256 (a copied database yields no usable cookie) and a hash of the
 * admin token the session was made with, so changing ADMIN_TOKEN ends every earlier session.
 * Idle and absolute expiry are judged on the database's clock, which every replica shares.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from './database.js';

export interface SessionExpiry {
  /** A session unused this long ends. */
  idleSeconds: number;
  /** A session ends this long after sign-in, however much it is used. */
  absoluteSeconds: number;
}

export const SESSION_EXPIRY: SessionExpiry = { idleSeconds: 60 * 60, absoluteSeconds: 12 * 60 * 60 };

export interface ConsoleSessions {
  readonly expiry: SessionExpiry;
  /** Starts a session; returns the id for the cookie. */
  create(): Promise<string>;
  /** Whether `id` is a live session of the current token; a live one counts as used now. */
  check(id: string): Promise<boolean>;
  /** Ends the session (sign-out). */
  revoke(id: string): Promise<void>;
  /** Deletes expired sessions and those of any other admin token; returns how many. */
  prune(): Promise<number>;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What a session row keeps of the admin token: enough to tell tokens apart, nothing to sign in with. */
export function adminTokenHash(adminToken: string): string {
  return sha256(`crm-sync console session token\n${adminToken}`);
}

export function dbConsoleSessions(
  db: Db,
  adminToken: string,
  expiry: SessionExpiry = SESSION_EXPIRY,
): ConsoleSessions {
  const tokenHash = adminTokenHash(adminToken);
  const { idleSeconds, absoluteSeconds } = expiry;
  return {
    expiry,
    async create() {
      const id = randomBytes(32).toString('base64url');
      await db.$executeRaw`INSERT INTO console_session (id_hash, token_hash) VALUES (${sha256(id)}, ${tokenHash})`;
      return id;
    },
    async check(id) {
      const touched = await db.$executeRaw`
        UPDATE console_session SET last_seen_at = now()
        WHERE id_hash = ${sha256(id)} AND token_hash = ${tokenHash}
          AND last_seen_at > now() - ${idleSeconds}::int * interval '1 second'
          AND created_at > now() - ${absoluteSeconds}::int * interval '1 second'`;
      return touched === 1;
    },
    async revoke(id) {
      await db.$executeRaw`DELETE FROM console_session WHERE id_hash = ${sha256(id)}`;
    },
    async prune() {
      return db.$executeRaw`
        DELETE FROM console_session
        WHERE token_hash <> ${tokenHash}
           OR last_seen_at <= now() - ${idleSeconds}::int * interval '1 second'
           OR created_at <= now() - ${absoluteSeconds}::int * interval '1 second'`;
    },
  };
}
