import type { FastifyInstance } from 'fastify';
import { mergeCrmFaultRates } from '../../crmFaults.js';
import { objectType, type SandboxState } from '../context.js';
import { validationError, type RateLimitPolicy } from '../errors.js';

interface FaultInput {
  count?: number;
  status?: number;
  policyName?: RateLimitPolicy;
  match?: string;
  acted?: boolean;
}

/**
 * The token endpoint and the sandbox's own admin API (`/_admin/*`, no auth): read back what was
 * written, count requests by path, queue faults, expire OAuth tokens, reset the seed.
 */
export function registerAdmin(app: FastifyInstance, state: SandboxState): void {
  const { store } = state;

  // Form-encoded, no Authorization header (wire notes 1.1).
  app.post<{ Body: Record<string, string> }>('/oauth/2026-03/token', async (req, reply) => {
    const out = state.auth.token(req.body ?? {});
    reply.code(out.status);
    return out.body;
  });

  // The scopes the credentials hold (`null`: every scope), as when an admin edits a Service Key.
  app.put<{ Body: { scopes: string[] | null } }>('/_admin/scopes', async (req) => {
    const scopes = req.body?.scopes;
    state.scopes = Array.isArray(scopes) ? new Set(scopes.map(String)) : undefined;
    return { scopes: state.scopes ? [...state.scopes] : null };
  });

  app.get<{ Params: { type: string } }>('/_admin/objects/:type', async (req) => {
    const type = objectType(req.params.type);
    return { results: [...store.objects[type].values()] };
  });

  app.get<{ Querystring: { fromType?: string; fromId?: string; toType?: string } }>(
    '/_admin/associations',
    async (req) => ({
      results: store.associations.filter(
        (a) =>
          (!req.query.fromType || a.fromType === req.query.fromType) &&
          (!req.query.fromId || a.fromId === req.query.fromId) &&
          (!req.query.toType || a.toType === req.query.toType),
      ),
    }),
  );

  app.get('/_admin/requests', async () => ({
    total: state.requests.records.length,
    byPath: state.requests.byPath(),
    byPrefix: state.prefixCounts.counts,
    rateLimited: state.limits.rejected,
    requests: state.requests.records,
  }));

  app.delete('/_admin/requests', async (_req, reply) => {
    state.requests.clear();
    reply.code(204);
  });

  app.post<{ Body: FaultInput }>('/_admin/faults', async (req, reply) => {
    const body = req.body ?? {};
    const status = body.status ?? 429;
    if (!Number.isInteger(status) || status < 400 || status > 599)
      throw validationError('status must be 4xx or 5xx');
    state.faults.add({
      status,
      count: body.count ?? 1,
      ...(body.policyName
        ? { policyName: body.policyName }
        : status === 429
          ? { policyName: 'TEN_SECONDLY_ROLLING' }
          : {}),
      ...(body.match ? { match: body.match } : {}),
      ...(body.acted === true ? { acted: true } : {}),
    });
    reply.code(204);
  });

  // Random faults at rates (chaos runs): `{rateLimitRate?, errorRate?, actedShare?}`.
  app.post('/_admin/fault-rates', async (req) => {
    const rates = mergeCrmFaultRates(state.randomFaults.rates, req.body ?? {});
    if (typeof rates === 'string') throw validationError(rates);
    state.randomFaults.rates = rates;
    return state.randomFaults.summary();
  });
  app.get('/_admin/fault-rates', async () => ({
    ...state.randomFaults.summary(),
    log: state.randomFaults.log,
  }));

  app.post('/_admin/tokens/expire', async () => ({ expired: state.auth.expireAll() }));

  // Every credential refused (401 INVALID_AUTHENTICATION, refresh BAD_REFRESH_TOKEN) until restored.
  app.post('/_admin/tokens/revoke', async (_req, reply) => {
    state.auth.revoke();
    reply.code(204);
  });
  app.post('/_admin/tokens/restore', async (_req, reply) => {
    state.auth.restore();
    reply.code(204);
  });

  app.get('/_admin/refs', async () => state.refs);

  // A portal rule: `property` required to create a record of `objectType` (store.requiredOnCreate).
  app.post<{ Body: { objectType?: string; property?: string } }>(
    '/_admin/validation-rules',
    async (req, reply) => {
      const type = objectType(String(req.body?.objectType ?? ''));
      if (!req.body?.property) throw validationError('property is required');
      store.requiredOnCreate.set(
        type,
        new Set([...(store.requiredOnCreate.get(type) ?? []), req.body.property]),
      );
      reply.code(204);
    },
  );
  app.delete('/_admin/validation-rules', async (_req, reply) => {
    store.requiredOnCreate.clear();
    reply.code(204);
  });

  app.post<{ Body: { withoutCustomProperties?: boolean } }>('/_admin/reset', async (req, reply) => {
    state.reset({ withCustomProperties: req.body?.withoutCustomProperties !== true });
    reply.code(204);
  });
}
