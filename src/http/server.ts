/**
 * The worker's HTTP server: the webhook receiver and the operator endpoints. Everything it needs
 * comes in through `deps`; it starts nothing on its own (call `listen`, and `close` on shutdown).
 */
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
} from 'fastify';
import { systemClock } from '../util/clock.js';
import { accessKeys } from './access.js';
import { operatorScope } from './operatorScope.js';
import { addSecurityHeaders } from './securityHeaders.js';
import { errorBody } from './errors.js';
import { opsRoutes, statusRoute } from './opsRoutes.js';
import type { HttpServerDeps } from './types.js';
import { webhookRoutes } from './webhookRoute.js';

export type HttpServer = FastifyInstance;

/** A route that declares a schema fails at registration, so one cannot go unchecked. */
const noSchemas = () => () => {
  throw new Error('routes here declare no JSON schema (validate with zod in the handler)');
};

export function buildHttpServer(deps: HttpServerDeps): HttpServer {
  const app = Fastify({
    // Widened so the instance has Fastify's default type, not one specialised on pino's Logger.
    loggerInstance: deps.logger as FastifyBaseLogger,
    // One info line per request is noise for an operator; the routes log what matters.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.maxBodyBytes,
    // No route declares a JSON schema (bodies are checked with zod where they are read): without
    // compilers of our own Fastify loads Ajv and fast-json-stringify anyway, ~4 MB of idle RSS.
    schemaController: { compilersFactory: { buildValidator: noSchemas, buildSerializer: noSchemas } },
  });

  addSecurityHeaders(app);
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(errorBody('NOT_FOUND', 'no such route')));

  app.setErrorHandler((err: FastifyError, request, reply) => {
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      request.log.debug({ code: err.code, status }, 'client error');
      return reply.code(status).send(errorBody('BAD_REQUEST', err.message));
    }
    request.log.error({ err }, 'request failed');
    return reply.code(500).send(errorBody('INTERNAL', 'internal error'));
  });

  app.register(webhookRoutes, {
    webhookSecrets: deps.webhookSecrets,
    maxBodyBytes: deps.maxBodyBytes,
    inbox: deps.inbox,
    metrics: deps.metrics,
    clock: deps.clock ?? systemClock,
  });
  app.register(opsRoutes, { readiness: deps.readiness, metrics: deps.metrics });
  const keys = deps.access ?? accessKeys(undefined);
  app.register(operatorScope(keys, [statusRoute(deps.status), ...(deps.operatorRoutes ?? [])]));
  for (const routes of deps.publicRoutes ?? []) app.register(routes);
  return app;
}
