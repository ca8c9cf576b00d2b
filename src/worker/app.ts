/**
 * `crm-sync start`: one process running the webhook receiver, the job runner and the cursor
 * poller, on one database and one Service request budget. Migrations are applied first.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { createRequestBudget, LiveReserve } from '../budget/index.js';
import type { AppConfig } from '../config/config.js';
import { credentialAdvice } from '../crm/credentials.js';
import { createCrmAdapter } from '../crm/factory.js';
import type { GateOptions } from '../crm/hubspot/gate.js';
import { listenOrNameTheSetting } from '../http/listen.js';
import { buildHttpServer } from '../http/server.js';
import { workerReadiness } from './readinessChecks.js';
import { collectCrmStanding } from '../ops/crmStanding.js';
import type { Logger } from '../log/logger.js';
import { loadMappings } from '../mapping/index.js';
import { createMetrics } from '../metrics/metrics.js';
import { createLookupCache } from '../pipelines/lookupCache.js';
import { createServiceClient } from '../service/index.js';
import { TEMPLATE_DIR } from '../store/embeddedTemplate.js';
import { openDatabase } from '../store/database.js';
import { isLive } from '../store/livePriority.js';
import { createDbSlotLedger } from '../store/dbSlotLedger.js';
import { crmLedgerFor } from '../store/crmSlotLedger.js';
import { refreshTokensFor } from '../store/crmCredentialStore.js';
import { getCursor } from '../store/cursorRepo.js';
import { countJobs } from '../store/jobAdmin.js';
import { migrate } from '../store/migrations.js';
import { countSyncStatusByState } from '../store/syncStatus/queries.js';
import { liveCallStartsSince } from '../store/syncStatusQueries.js';
import { systemClock, type Clock } from '../util/clock.js';
import { budgetPriorityOf } from '../store/jobKinds.js';
import { closeHttp } from './closeHttp.js';
import { createCrmCredentialMonitor } from './crmCredentials.js';
import { createHousekeeping } from './housekeeping.js';
import { flushDealsQuietly } from '../pipelines/dealSignals.js';
import { createDriftMonitor } from '../drift/monitor.js';
import { createDbInbox, inboxFlushesFor } from './inbox.js';
import { createPoller } from './poller.js';
import { POLL_CURSOR } from '../sync/cursors.js';
import { recoverFromDeadProcess } from './recover.js';
import { recordExhaustedJobs } from './jobOutcome.js';
import { createJobRunner, DEFAULT_DRAIN_MS, runnerOptionsFor } from './runner.js';
import { collectForecast, collectStatus, forecastTimes } from '../ops/status.js';
import { adminRoutes } from './adminRoutes.js';
import { boundAddress } from './boundAddress.js';
import { consoleRoutes } from '../console/routes.js';
import { consolePublicRoutes, signOutRoute } from '../console/publicRoutes.js';
import { createSignInThrottle } from '../http/signInThrottle.js';
import { dbConsoleSessions } from '../store/consoleSessions.js';
import { recordLinker } from '../console/links.js';
import { previewCall, type PreviewSource } from '../mapping/preview.js';
import { accessKeys } from '../http/access.js';

export interface WorkerHandle {
  /** A URL this host can reach the worker on (loopback when it listens on every interface). */
  url: string;
  /** The address actually bound, e.g. http://0.0.0.0:8080 or http://[::1]:8080. */
  listenUrl: string;
  port: number;
  workerId: string;
  /**
   * Graceful stop: no new work; runs stop before their next side effect, those in flight get up
   * to `drainMs` (runner.ts), the jobs with none in flight are handed back; then close.
   */
  stop(drainMs?: number): Promise<void>;
}

export async function startWorker(
  config: AppConfig,
  options: {
    logger: Logger;
    clock?: Clock;
    /** The benchmarks' sandbox with HubSpot's limits lifted says so here (searches report none). */
    hubspotLimits?: GateOptions;
  },
): Promise<WorkerHandle> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger;
  const workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const mapping = loadMappings(config.configDir, config.crm);

  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    logger,
    // A first embedded start loads the data directory `npm run build` made: no initdb.
    templateDir: TEMPLATE_DIR,
  });
  const cleanup: (() => Promise<unknown>)[] = [() => database.close()];
  try {
    const applied = await migrate(database, { logger });
    logger.info(
      { database: database.kind, location: database.location, applied: applied.length },
      'database ready',
    );
    const db = database.prisma;
    const metrics = createMetrics();
    if (database.kind === 'embedded') {
      const recovered = await recoverFromDeadProcess(db, new Date(clock.now()));
      if (recovered.requeued + recovered.failed > 0) {
        logger.warn(
          { requeued: recovered.requeued, failed: recovered.failed },
          'jobs left running by a stopped process were handed back',
        );
      }
      await recordExhaustedJobs(
        { db, crm: config.crm, workerId, logger, metrics },
        recovered.failedJobs,
        new Date(clock.now()),
      );
    }
    const ledger = createDbSlotLedger({ db, liveDb: database.live });
    // Learns when live calls start (docs/performance.md, "Bursts of live calls"); a restart
    // relearns the last week from the calls that got a live context.
    const liveReserve = new LiveReserve();
    const since = new Date(clock.now() - 7 * 86_400_000);
    for (const at of await liveCallStartsSince(db, config.crm, since)) liveReserve.record(at.getTime());
    const budget = createRequestBudget({
      limits: config.service.limits,
      clock,
      ledger,
      liveWindowReserve: config.service.liveWindowReserve,
      liveReserve,
      liveDailyReserve: config.service.liveDailyReserve,
      logger,
    });
    cleanup.unshift(() => budget.close());
    const service = createServiceClient({
      baseUrl: config.service.baseUrl,
      apiKey: config.service.apiKey,
      budget,
      clock,
      logger,
      timeoutMs: config.service.requestTimeoutMs,
      onAttempt: (a) => {
        metrics.serviceRequests.inc({ endpoint: a.endpoint, status: a.status });
        metrics.serviceRequestDuration.observe({ endpoint: a.endpoint }, a.durationMs / 1000);
      },
    });
    cleanup.unshift(() => service.close());
    const crm = await createCrmAdapter(config, {
      clock,
      logger,
      mapping,
      hubspotLimits: options.hubspotLimits,
      // The live lane runs its jobs as live work (src/store/livePriority.ts): their lookups go first.
      isLive,
      ledger: crmLedgerFor(database, config.crm, clock, cleanup),
      refreshTokens: refreshTokensFor(config, database.prisma),
    });
    const pipeline = {
      db,
      crmName: config.crm,
      service,
      crm,
      mapping,
      lookups: createLookupCache({ crm, mapping, clock }),
      clock,
      logger,
      metrics,
    };
    const credentials = createCrmCredentialMonitor({
      db,
      advice: credentialAdvice(config),
      check: () => crm.checkCredentials(),
      clock,
      logger,
      setGauge: (ok) => metrics.crmCredentialsOk.set({ crm: config.crm }, ok),
      onReleased: () => runner.wake(),
    });
    const runner = createJobRunner(
      {
        pipeline,
        outcome: { db, crm: config.crm, workerId, logger, metrics, credentials },
        clock,
        logger,
        liveDb: database.live,
      },
      runnerOptionsFor(database.kind),
    );
    const housekeeping = createHousekeeping({
      db,
      crm: config.crm,
      clock,
      logger,
      onRequeued: (call) => metrics.callsRequeued.inc({ state: call.state }),
      onEnqueued: () => runner.wake(),
      writesFollowups: Boolean(mapping.writeback.followups),
      flushDeals: () => flushDealsQuietly(pipeline),
      drift: createDriftMonitor({
        db,
        crm: config.crm,
        clock,
        logger,
        thresholds: config.drift,
        setGauge: (condition, raised) => metrics.driftWarning.set({ condition }, raised ? 1 : 0),
      }),
    });
    const poller = createPoller(
      { db, crm: config.crm, service, clock, logger, onEnqueued: () => runner.wake(), housekeeping },
      {
        schedule: config.pollSchedule,
        workerId,
        leaseMs: 30_000,
        firstLookbackMs: 24 * 3_600_000,
        maxPagesPerRun: 50,
      },
    );
    const statusDeps = {
      db,
      crm: config.crm,
      clock,
      limits: config.service.limits,
      ledger,
      reserves: config.service,
      drift: config.drift,
    };
    const status = () =>
      collectStatus({
        ...statusDeps,
        budgetStats: () => budget.stats(),
        worker: () => ({
          workerId,
          pollLeader: poller.isLeader(),
          jobsInFlight: runner.inFlight(),
          serviceKeyRejected: service.health().unauthorized,
          // Behind the admin access: /readyz only names the setting to check.
          serviceLastError: service.health().lastError ?? null,
          crmCredentials: credentials.state(),
          crm: crm.usage(),
        }),
      });
    metrics.setBudgetStatsSource(() => budget.stats());
    metrics.setForecastSource(async () => forecastTimes(await collectForecast(statusDeps), clock.now()));
    metrics.setSyncCallsSource(() => countSyncStatusByState(db, { crm: config.crm }));
    metrics.setCursorUpdatedSource(async () => (await getCursor(db, POLL_CURSOR))?.updatedAt ?? null);
    metrics.setJobQueueDepthSource(async () =>
      (await countJobs(db)).map((j) => ({
        state: j.state,
        priority: budgetPriorityOf(j.priority),
        count: j.count,
      })),
    );
    const readiness = workerReadiness({
      pingDatabase: () => db.$queryRaw`SELECT 1`,
      serviceHealth: () => service.health(),
      crm: () => credentials.readiness(),
      crmStanding: () => collectCrmStanding(db, config.crm),
      clock,
    });
    const adminToken = config.http.adminToken;
    const sessions = adminToken === undefined ? undefined : dbConsoleSessions(db, adminToken);
    // Sessions made with an earlier ADMIN_TOKEN (and expired ones) go now; check() refuses them anyway.
    await sessions?.prune();
    const access = accessKeys(adminToken, {
      publicOrigin: config.http.publicOrigin,
      sessions,
      trustProxy: config.http.trustProxy,
    });
    // The console's mapping preview: reads only, at write-back priority, from this worker's budget.
    const previewSource: PreviewSource = {
      getCall: (callId) => service.getCall(callId, { priority: 'writeback' }),
      getAnalysis: (callId) => service.getAnalysis(callId, { priority: 'writeback' }),
      lookup: (participant, fields, rule) => crm.lookup(participant, fields, rule),
    };
    const http = buildHttpServer({
      logger,
      webhookSecrets: config.service.webhookSecrets,
      maxBodyBytes: config.http.maxBodyBytes,
      inbox: createDbInbox({
        db,
        liveDb: database.live,
        crm: config.crm,
        onEnqueued: (kinds) => runner.wake(kinds),
        flushesAtOnce: inboxFlushesFor(database.kind),
      }),
      status,
      readiness,
      metrics,
      clock,
      access,
      operatorRoutes: [
        adminRoutes({ db, crm: config.crm, clock, onEnqueued: () => runner.wake() }),
        consoleRoutes({
          db,
          crm: config.crm,
          clock,
          status,
          links: recordLinker(config),
          configDir: config.configDir,
          preview: (callId) => previewCall(previewSource, mapping, callId, { now: clock.now() }),
          onEnqueued: () => runner.wake(),
          csrf: access.csrf,
          tokenConfigured: access.adminToken !== undefined,
        }),
        signOutRoute(access),
      ],
      publicRoutes: [consolePublicRoutes(access, createSignInThrottle(clock))],
    });
    await listenOrNameTheSetting(http, config.http);
    const bound = boundAddress(http.server.address(), config.http);
    cleanup.unshift(() => http.close());

    // Say plainly at start when the key is bad, instead of at the first webhook.
    void service
      .listCallsPage({ limit: 1 }, { priority: 'writeback' })
      .then(() => logger.info('Service API key accepted'))
      .catch((err: unknown) =>
        logger.error(
          { code: (err as { code?: string }).code },
          `Service check failed: ${(err as Error).message}`,
        ),
      );

    runner.start();
    // Probes the CRM credentials now; once accepted, jobs an earlier run held back on CRM_AUTH run.
    credentials.start();
    poller.start();
    const port = bound.port;
    logger.info(
      { address: bound.listenUrl, workerId, crm: config.crm, plan: config.service.plan },
      'crm-sync worker started',
    );

    let stopping: Promise<void> | null = null;
    return {
      url: bound.localUrl,
      listenUrl: bound.listenUrl,
      port,
      workerId,
      stop(drainMs = DEFAULT_DRAIN_MS) {
        stopping ??= (async () => {
          logger.info('stopping: no new work; draining running jobs');
          await closeHttp(http, clock);
          await poller.stop();
          await credentials.stop();
          await runner.stop(drainMs);
          await budget.close().catch(() => undefined);
          await service.close().catch(() => undefined);
          await database.close();
          logger.info('stopped');
        })();
        return stopping;
      },
    };
  } catch (err) {
    for (const fn of cleanup) await fn().catch(() => undefined);
    throw err;
  }
}
