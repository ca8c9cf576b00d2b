/**
 * Operator actions over HTTP, for the CLI when it cannot open the database itself (the embedded
 * database belongs to the running worker). Registered behind the operator access rules
 * (src/http/operatorScope.ts): the admin token, or loopback only when none is set.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { CrmName } from '../crm/types.js';
import type { Db } from '../store/database.js';
import type { Clock } from '../util/clock.js';
import { runReplay } from './replay.js';
import { parseReplayRequest, ReplayRequestError, type ReplayInput } from './replayRequest.js';
import { syncHistory } from '../store/syncEventRepo.js';
import { getSyncStatus } from '../store/syncStatusRepo.js';

export interface AdminRouteDeps {
  db: Db;
  crm: CrmName;
  clock: Clock;
  onEnqueued: () => void;
}

export function adminRoutes(deps: AdminRouteDeps): FastifyPluginAsync {
  return async (admin) => {
    admin.post<{ Body: ReplayInput | undefined }>('/admin/replay', async (req, reply) => {
      let request;
      try {
        request = parseReplayRequest(req.body ?? {});
      } catch (err) {
        if (!(err instanceof ReplayRequestError)) throw err;
        return reply.code(400).send({ error: { code: 'BAD_REQUEST', message: err.message } });
      }
      const result = await runReplay(deps.db, deps.crm, request, new Date(deps.clock.now()));
      deps.onEnqueued();
      return result;
    });
    admin.get<{ Params: { id: string } }>('/admin/calls/:id', async (req, reply) => {
      const status = await getSyncStatus(deps.db, req.params.id, deps.crm);
      if (!status) return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'unknown call' } });
      return { status, history: await syncHistory(deps.db, req.params.id, { crm: deps.crm }) };
    });
  };
}
