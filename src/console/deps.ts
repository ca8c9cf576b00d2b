import type { CrmName } from '../crm/types.js';
import type { Preview } from '../mapping/preview.js';
import type { Db } from '../store/database.js';
import type { Clock } from '../util/clock.js';
import type { StatusSnapshot } from '../ops/status.js';
import type { RecordLinker } from './links.js';

/** What the console reads and does; wired by src/worker/app.ts, built by hand in tests. */
export interface ConsoleDeps {
  db: Db;
  crm: CrmName;
  clock: Clock;
  /** The same snapshot as GET /status and `crm-sync status --json`. */
  status: () => Promise<StatusSnapshot>;
  links: RecordLinker;
  configDir: string;
  /** Builds what one call would write (reads the Service and the CRM, writes nothing). */
  preview?: ((callId: string) => Promise<Preview>) | undefined;
  /** Wakes the job runner after a replay queued work. */
  onEnqueued: () => void;
  /** The CSRF token every console form carries. */
  csrf: string;
}
