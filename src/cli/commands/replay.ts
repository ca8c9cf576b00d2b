import type { Command } from 'commander';

/** `crm-sync replay --call ID | --failed`: put calls back to work. */
export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description('Re-run the write-back of one call, or of every failed call')
    .option('--call <id>', 'the call to replay')
    .option('--failed', 'replay every call in state failed')
    .action(async (opts: { call?: string; failed?: boolean }) => {
      if (!opts.call && !opts.failed) throw new Error('give --call <id> or --failed');
      const { loadConfig } = await import('../../config/config.js');
      const { openDatabaseOrWorker, askWorker } = await import('../workerDb.js');
      const config = loadConfig();
      const database = await openDatabaseOrWorker(config);
      let callIds: string[];
      try {
        if (database) {
          const { replayCall, replayFailed } = await import('../../worker/replay.js');
          const now = new Date();
          if (opts.call) {
            await replayCall(database.prisma, config.crm, opts.call, now);
            callIds = [opts.call];
          } else callIds = (await replayFailed(database.prisma, config.crm, now)).callIds;
        } else {
          callIds = (
            await askWorker<{ callIds: string[] }>(
              config,
              '/admin/replay',
              opts.call ? { callId: opts.call } : { failed: true },
            )
          ).callIds;
        }
      } finally {
        await database?.close();
      }
      console.log(
        callIds.length === 0
          ? 'Nothing to replay.'
          : `Queued ${callIds.length} call(s) for write-back: ${callIds.slice(0, 20).join(', ')}`,
      );
    });
}
