/**
 * Operator endpoints: liveness, readiness, status and Prometheus metrics. They carry no secrets
 * but do describe the worker, so bind the port to an internal network.
 */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics/metrics.js';
import { errorBody } from './errors.js';
import type { ReadinessReport } from './types.js';

export interface OpsRouteDeps {
  status: () => Promise<unknown>;
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

  app.get('/status', async (request, reply) => {
    try {
      return reply.send(await deps.status());
    } catch (err) {
      request.log.error({ err }, 'status unavailable');
      return reply.code(500).send(errorBody('STATUS_UNAVAILABLE', 'status could not be read'));
    }
  });

  app.get('/metrics', async (_request, reply) => {
    const text = await deps.metrics.render();
    return reply.type(deps.metrics.contentType).send(text);
  });
}
