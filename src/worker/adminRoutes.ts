/**
 * Operator actions over HTTP, for the CLI when it cannot open the database itself (the embedded
 * database belongs to the running worker). Answers loopback clients only.
 */
import type { FastifyInstance } from 'fastify';
import type { CrmName } from '../crm/types.js';
import type { Db } from '../store/database.js';
import type { Clock } from '../util/clock.js';
import { replayCall, replayFailed } from './replay.js';
import { syncHistory } from '../store/syncEventRepo.js';
import { getSyncStatus } from '../store/syncStatusRepo.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export function registerAdminRoutes(
  app: FastifyInstance,
  deps: { db: Db; crm: CrmName; clock: Clock; onEnqueued: () => void },
): void {
  app.register(async (admin) => {
    admin.addHook('onRequest', async (req, reply) => {
      // A request relayed by a proxy on this host also comes from loopback: refuse anything that
      // carries forwarding headers, so the admin routes are never reachable through one.
      const forwarded = req.headers['x-forwarded-for'] ?? req.headers.forwarded ?? req.headers['x-real-ip'];
      if (!LOOPBACK.has(req.socket.remoteAddress ?? '') || forwarded !== undefined) {
        await reply
          .code(403)
          .send({ error: { code: 'ADMIN_LOOPBACK_ONLY', message: 'admin routes answer loopback only' } });
      }
    });
    admin.post<{ Body: { callId?: string; failed?: boolean } }>('/admin/replay', async (req, reply) => {
      const now = new Date(deps.clock.now());
      const body = req.body ?? {};
      if (body.callId) {
        await replayCall(deps.db, deps.crm, body.callId, now);
        deps.onEnqueued();
        return { callIds: [body.callId] };
      }
      if (body.failed) {
        const result = await replayFailed(deps.db, deps.crm, now);
        deps.onEnqueued();
        return result;
      }
      return reply.code(400).send({ error: { code: 'BAD_REQUEST', message: 'give callId or failed: true' } });
    });
    admin.get<{ Params: { id: string } }>('/admin/calls/:id', async (req, reply) => {
      const status = await getSyncStatus(deps.db, req.params.id, deps.crm);
      if (!status) return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'unknown call' } });
      return { status, history: await syncHistory(deps.db, req.params.id, { crm: deps.crm }) };
    });
  });
}
