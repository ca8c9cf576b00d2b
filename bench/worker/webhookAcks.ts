/**
 * Webhook acks through the worker's receiver and its database-backed inbox: bench/webhook-ack.ts's
 * load (signed call.completed deliveries from a child process, over keep-alive connections) against
 * buildHttpServer with createDbInbox on a migrated database, the same pair the worker runs. Each
 * ack is one transaction: the delivery stored once, the call recorded, its write-back queued.
 */
import { openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrations.js';
import { createDbInbox, inboxFlushesFor } from '../../src/worker/inbox.js';
import { benchWebhookAck, type WebhookAckResult } from '../webhook-ack.js';
import type { BenchDatabase } from './databases.js';

export interface AckRun extends WebhookAckResult {
  database: BenchDatabase['name'];
  concurrency: number;
}

export async function benchDbAcks(
  target: BenchDatabase,
  options: { seconds: number; concurrency: number[] },
): Promise<AckRun[]> {
  const database = await openDatabase({ databaseUrl: target.databaseUrl, dataDir: target.dataDir });
  try {
    await migrate(database);
    const inbox = createDbInbox({
      db: database.prisma,
      crm: 'hubspot',
      flushesAtOnce: inboxFlushesFor(database.kind),
    });
    const runs: AckRun[] = [];
    for (const concurrency of options.concurrency) {
      // The load's event ids restart at 0 each run: start empty so none is a duplicate.
      await database.prisma.$executeRawUnsafe('TRUNCATE webhook_inbox, job, sync_event, sync_status');
      const result = await benchWebhookAck({ seconds: options.seconds, concurrency, inbox });
      runs.push({ ...result, database: target.name, concurrency });
    }
    return runs;
  } finally {
    await database.close();
  }
}
