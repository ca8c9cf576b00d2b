/**
 * Operator actions over HTTP, for the CLI when it cannot open the database itself (the embedded
 * database belongs to the running worker). Registered behind the operator access rules
 * (src/http/operatorScope.ts): the admin token, or loopback only when none is set.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { CrmName } from '../crm/types.js';
import type { Db } from '../store/database.js';
import type { Clock } from '../util/clock.js';
import { loadCallView } from './callView.js';
import { runReplay } from '../ops/replay.js';
import { parseReplayRequest, ReplayRequestError, type ReplayInput } from '../ops/replayRequest.js';

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
      const view = await loadCallView(deps.db, deps.crm, req.params.id);
      if (!view) return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'unknown call' } });
      return view;
    });
  };
}
