import type { Command } from 'commander';

/** `crm-sync status`: the sync-status table at a glance, or one call's history. */
export function registerStatus(program: Command): void {
  program
    .command('status')
    .description(
      'Show calls by sync state, recent failures, budget use and forecast, queue depth, the cursor and drift warnings',
    )
    .option('--json', 'print JSON')
    .option('--call <id>', "show one call's sync row and its history")
    .action(async (opts: { json?: boolean; call?: string }) => {
      const { loadConfig } = await import('../../config/config.js');
      const { openDatabaseOrWorker, askWorker } = await import('../workerDb.js');
      const { formatStatus, formatCall } = await import('../statusFormat.js');
      const config = loadConfig();
      const database = await openDatabaseOrWorker(config, { mustExist: true });
      let output: unknown;
      try {
        if (opts.call) {
          if (database) {
            const { loadCallView } = await import('../../worker/callView.js');
            output = await loadCallView(database.prisma, config.crm, opts.call);
            if (!output) throw new Error(`no sync row for call ${opts.call} (${config.crm})`);
          } else {
            output = await askWorker(config, `/admin/calls/${encodeURIComponent(opts.call)}`);
          }
        } else if (database) {
          const { collectStatus } = await import('../../ops/status.js');
          const { createDbSlotLedger } = await import('../../store/dbSlotLedger.js');
          const { systemClock } = await import('../../util/clock.js');
          output = await collectStatus({
            db: database.prisma,
            crm: config.crm,
            clock: systemClock,
            limits: config.service.limits,
            ledger: createDbSlotLedger({ db: database.prisma }),
            reserves: config.service,
            drift: config.drift,
          });
        } else {
          output = await askWorker(config, '/status');
        }
      } finally {
        await database?.close();
      }
      if (opts.json) console.log(JSON.stringify(output, null, 2));
      else if (opts.call) console.log(formatCall(output as Parameters<typeof formatCall>[0]));
      else console.log(formatStatus(output as Parameters<typeof formatStatus>[0]));
    });
}
