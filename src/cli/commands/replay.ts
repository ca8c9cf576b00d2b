import type { Command } from 'commander';
import type { ReplayResult } from '../../ops/replay.js';

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
        const { parseReplayRequest, ReplayRequestError } = await import('../../ops/replayRequest.js');
        const { UsageError } = await import('../usageError.js');
        const input = {
          callId: opts.call,
          failed: opts.failed,
          code: opts.code,
          since: opts.since,
          until: opts.until,
          regenerateFollowups: opts.regenerateFollowups === true,
        };
        let request;
        try {
          request = parseReplayRequest(input);
        } catch (err) {
          throw err instanceof ReplayRequestError ? new UsageError(err.message) : err;
        }
        const { loadConfig } = await import('../../config/config.js');
        const { openDatabaseOrWorker, askWorker } = await import('../workerDb.js');
        const config = loadConfig();
        // Replays calls a worker synced: there is nothing to do in a database that does not exist yet.
        const database = await openDatabaseOrWorker(config, { mustExist: true });
        let result: ReplayResult;
        try {
          if (database) {
            const { runReplay } = await import('../../ops/replay.js');
            result = await runReplay(database.prisma, config.crm, request, new Date());
          } else {
            // The same request, carried out by the running worker with the same code.
            result = await askWorker<ReplayResult>(config, '/admin/replay', input);
          }
        } finally {
          await database?.close();
        }
        console.log(replayOutcome(result, opts.code));
      },
    );
}

/** What the replay did; a code that matched nothing is shown beside the codes that exist. */
export function replayOutcome(result: ReplayResult, code: string | undefined): string {
  const { callIds, failedCodes } = result;
  if (callIds.length > 0) {
    return `Queued ${callIds.length} call(s) for write-back: ${callIds.slice(0, 20).join(', ')}`;
  }
  if (code === undefined || failedCodes === undefined) return 'Nothing to replay.';
  if (failedCodes.length === 0)
    return `Nothing to replay: no call is in state failed (asked for code ${code}).`;
  const known = failedCodes.map((c) => `${c.code ?? '(no code)'} (${c.calls})`).join(', ');
  return `Nothing to replay: no failed call has the code ${code}. The failed calls have: ${known}.`;
}
