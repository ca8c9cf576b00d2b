import {
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

/**
 * One process at a time per embedded data directory: PGlite itself lets two processes open the
 * same files and corrupt them. The lock file holds the owner's pid and host; a lock left by a dead
 * process is taken over. The owner touches the file every REFRESH_MS so that a lock written on
 * another host (a recreated container sharing the volume) can be judged by its age.
 */
const REFRESH_MS = 10_000;
/** A lock from another host not touched for this long is stale. */
const FOREIGN_STALE_MS = 3 * REFRESH_MS;

export class EmbeddedDatabaseInUseError extends Error {
  readonly code = 'DB_EMBEDDED_IN_USE';
  constructor(
    readonly dataDir: string,
    /** Null when the lock file cannot be read. */
    readonly pid: number | null,
    lockFile: string,
  ) {
    super(
      pid === null
        ? `the embedded database at ${dataDir} has an unreadable lock file ${lockFile}; delete it if no crm-sync process is running, or set DATABASE_URL`
        : `the embedded database at ${dataDir} is in use by process ${pid}; stop it or set DATABASE_URL`,
    );
    this.name = 'EmbeddedDatabaseInUseError';
  }
}

export interface EmbeddedLock {
  file: string;
  release(): void;
}

interface LockContent {
  pid: number;
  host: string;
  startedAt: string;
}

/** Lock files this process holds: a lock naming our pid that is not here is a previous life's. */
const heldHere = new Set<string>();

/** Takes `<dataDir>/pglite.lock`, or throws EmbeddedDatabaseInUseError naming the holder. */
export function acquireEmbeddedLock(dataDir: string): EmbeddedLock {
  mkdirSync(dataDir, { recursive: true });
  const file = path.resolve(dataDir, 'pglite.lock');
  const content: LockContent = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  // Two tries: the second after taking over a stale lock.
  for (let attempt = 0; attempt < 2; attempt++) {
    if (tryCreate(file, content)) return hold(file);
    const holder = readHolder(file);
    if (holder === undefined) continue; // released between our create and read
    if (holder === null || !isStale(file, holder)) {
      throw new EmbeddedDatabaseInUseError(dataDir, holder?.pid ?? null, file);
    }
    takeOverStale(file, holder);
  }
  throw new EmbeddedDatabaseInUseError(dataDir, readHolder(file)?.pid ?? null, file);
}

function hold(file: string): EmbeddedLock {
  heldHere.add(file);
  const timer = setInterval(() => {
    const now = new Date();
    try {
      utimesSync(file, now, now);
    } catch {
      // Removed by hand: nothing to refresh.
    }
  }, REFRESH_MS);
  timer.unref();
  return {
    file,
    release: () => {
      clearInterval(timer);
      heldHere.delete(file);
      // Only remove our own lock (never one a later process took over).
      if (readHolder(file)?.pid === process.pid) unlinkSync(file);
    },
  };
}

/** Creates the lock with its content in one step: a hard link fails if the name exists. */
function tryCreate(file: string, content: LockContent): boolean {
  const temp = `${file}.${content.pid}-${Date.now()}.tmp`;
  writeFileSync(temp, JSON.stringify(content));
  try {
    linkSync(temp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(temp);
  }
}

/** The lock's owner; undefined when the file is gone, null when it cannot be read. */
function readHolder(file: string): LockContent | null | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as Partial<LockContent>;
    if (typeof parsed.pid !== 'number') return null;
    return { pid: parsed.pid, host: String(parsed.host), startedAt: String(parsed.startedAt) };
  } catch {
    return null;
  }
}

function isStale(file: string, holder: LockContent): boolean {
  if (holder.host !== hostname()) {
    try {
      return Date.now() - statSync(file).mtimeMs > FOREIGN_STALE_MS;
    } catch {
      return true;
    }
  }
  if (holder.pid === process.pid) return !heldHere.has(file);
  return !isAlive(holder.pid);
}

function isAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Moves the stale file aside with an atomic rename, then checks that what was moved is the stale
 * lock read before; if another process had just taken over, its fresh lock is put back.
 */
function takeOverStale(file: string, stale: LockContent): void {
  const aside = `${file}.stale-${process.pid}-${Date.now()}`;
  try {
    renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const moved = readHolder(aside);
  if (moved && (moved.pid !== stale.pid || moved.startedAt !== stale.startedAt)) {
    renameSync(aside, file);
    return;
  }
  unlinkSync(aside);
}
