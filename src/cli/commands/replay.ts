import type { Command } from 'commander';

/**
 * `crm-sync replay --call ID | --failed | --code CODE | --since/--until [--regenerate-followups]`:
 * put calls back to work.
 */
export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description('Re-run the write-back of one call, or of failed calls (all, by error code or time window)')
    .option('--call <id>', 'the call to replay')
    .option('--failed', 'replay every call in state failed')
    .option('--code <code>', 'replay the failed calls whose last error has this code')
    .option(
      '--since <time>',
      'replay the calls that failed at or after this time (UTC), e.g. 2026-01-31T09:00Z',
    )
    .option('--until <time>', 'replay the calls that failed before this time (UTC)')
    .option(
      '--regenerate-followups',
      'also ask the Service for new follow-up drafts for replayed calls that have none, even when the first request was answered or may have reached it (each request makes new drafts; late ones from the first are written too)',
    )
    .action(
      async (opts: {
        call?: string;
        failed?: boolean;
        code?: string;
        since?: string;
        until?: string;
        regenerateFollowups?: boolean;
      }) => {
        const { parseReplayRequest } = await import('../../worker/replayRequest.js');
        const input = {
          callId: opts.call,
          failed: opts.failed,
          code: opts.code,
          since: opts.since,
          until: opts.until,
          regenerateFollowups: opts.regenerateFollowups === true,
        };
        const request = parseReplayRequest(input);
        const { loadConfig } = await import('../../config/config.js');
        const { openDatabaseOrWorker, askWorker } = await import('../workerDb.js');
        const config = loadConfig();
        const database = await openDatabaseOrWorker(config);
        let callIds: string[];
        try {
          if (database) {
            const { runReplay } = await import('../../worker/replay.js');
            callIds = (await runReplay(database.prisma, config.crm, request, new Date())).callIds;
          } else {
            // The same request, carried out by the running worker with the same code.
            callIds = (await askWorker<{ callIds: string[] }>(config, '/admin/replay', input)).callIds;
          }
        } finally {
          await database?.close();
        }
        console.log(
          callIds.length === 0
            ? 'Nothing to replay.'
            : `Queued ${callIds.length} call(s) for write-back: ${callIds.slice(0, 20).join(', ')}`,
        );
      },
    );
}
