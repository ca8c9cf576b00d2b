import type { Command } from 'commander';

/** `crm-sync start`: the long-running worker (webhooks, jobs, poller), until SIGTERM/SIGINT. */
export function registerStart(program: Command): void {
  program
    .command('start')
    .description('Run the worker: webhook receiver, job runner and cursor poller (applies migrations first)')
    .option(
      '--drain-seconds <n>',
      'on SIGTERM, how long Service and CRM requests in flight may finish (at least the Service request timeout, 15 s); work with none in flight is handed back at once',
      '20',
    )
    .action(async (opts: { drainSeconds: string }) => {
      const { loadConfig } = await import('../../config/config.js');
      const { redactConfig } = await import('../../config/redact.js');
      const { limitWarnings } = await import('../../config/problems.js');
      const { createLogger } = await import('../../log/logger.js');
      const { startWorker } = await import('../../worker/app.js');
      const config = loadConfig({ require: { service: true, crm: true } });
      // Before anything is opened: the process image is replaced (nodeFlags.ts).
      const { reexecWithFlags } = await import('../nodeFlags.js');
      const reexec = reexecWithFlags({
        argv: process.argv,
        execArgv: process.execArgv,
        execPath: process.execPath,
        env: process.env,
        canExecve: typeof process.execve === 'function',
        database: config.databaseUrl ? 'postgresql' : 'embedded',
      });
      if (reexec) process.execve?.(reexec.file, reexec.args, reexec.env);
      const logger = createLogger({ level: config.logLevel });
      logger.debug({ config: redactConfig(config) }, 'configuration');
      for (const warning of limitWarnings(config.service.plan, config.service.limits)) logger.warn(warning);
      const worker = await startWorker(config, { logger });
      // Start-up's young generation would otherwise stay committed for the process's lifetime.
      const { releaseStartupHeap } = await import('../../util/startupHeap.js');
      const released = releaseStartupHeap();
      logger.debug(
        {
          ms: Math.round(released.ms),
          heapBeforeMb: Math.round(released.heapBeforeBytes / 2 ** 20),
          heapAfterMb: Math.round(released.heapAfterBytes / 2 ** 20),
        },
        'start-up heap released',
      );
      const guard = config.http.adminToken
        ? 'console, /status and /admin/* need ADMIN_TOKEN'
        : 'console, /status and /admin/* answer loopback only (no ADMIN_TOKEN)';
      console.log(
        `crm-sync worker listening on ${worker.listenUrl} (webhooks at /webhooks, console at ${worker.url}/console; ${guard})`,
      );
      await new Promise<void>((resolve) => {
        let stopping = false;
        const onSignal = (signal: string) => {
          if (stopping) {
            logger.warn(
              { signal },
              'second signal: exiting now; unfinished jobs return to the queue when their lease lapses',
            );
            process.exit(1);
          }
          stopping = true;
          logger.info({ signal }, 'signal received');
          void worker
            .stop(Number(opts.drainSeconds) * 1000)
            .then(
              () => 0,
              (err: unknown) => {
                logger.error({ err }, 'error while stopping');
                return 1;
              },
            )
            .then((code) => {
              resolve();
              // Everything is closed; do not wait for stray library timers (the schema engine's).
              process.exit(code);
            });
        };
        process.on('SIGTERM', () => onSignal('SIGTERM'));
        process.on('SIGINT', () => onSignal('SIGINT'));
      });
    });
}
