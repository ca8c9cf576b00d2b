/**
 * Open operator endpoints: liveness, readiness and Prometheus metrics (no personal data: labels
 * are endpoints, states and priorities). GET /status is here too, but is registered behind the
 * operator access rules (server.ts) since failure messages may name a participant.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Metrics } from '../metrics/metrics.js';
import { errorBody } from './errors.js';
import type { ReadinessReport } from './types.js';

export interface OpsRouteDeps {
  readiness: () => Promise<ReadinessReport>;
  metrics: Metrics;
}

export async function opsRoutes(app: FastifyInstance, deps: OpsRouteDeps): Promise<void> {
  app.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });

  // Liveness only: answering at all proves the process and its event loop run.
  app.get('/healthz', async () => ({ ok: true }));

  app.get('/readyz', async (request, reply) => {
    let report: ReadinessReport;
    try {
      report = await deps.readiness();
    } catch (err) {
      request.log.warn({ err }, 'readiness check threw');
      report = { ready: false, checks: { readiness: { ok: false, detail: 'readiness check failed' } } };
    }
    return reply.code(report.ready ? 200 : 503).send(report);
  });

  app.get('/metrics', async (_request, reply) => {
    const text = await deps.metrics.render();
    return reply.type(deps.metrics.contentType).send(text);
  });
}

/** GET /status: the same JSON as `crm-sync status --json`. */
export function statusRoute(status: () => Promise<unknown>): FastifyPluginAsync {
  return async (app) => {
    app.get('/status', async (request, reply) => {
      try {
        return reply.send(await status());
      } catch (err) {
        request.log.error({ err }, 'status unavailable');
        return reply.code(500).send(errorBody('STATUS_UNAVAILABLE', 'status could not be read'));
      }
    });
  };
}
