/**
 * The operator console: server-rendered pages over the same reads and actions as the CLI.
 * Registered inside the operator scope (src/http/operatorScope.ts), so every route here already
 * has an authorised, same-site caller; consolePublicRoutes holds what must work before sign-in.
 */
import type { FastifyPluginAsync } from 'fastify';
import { failureGroups, recentCalls, searchCalls } from '../store/syncStatusQueries.js';
import { runReplay } from '../ops/replay.js';
import { parseReplayRequest, ReplayRequestError, type ReplayInput } from '../ops/replayRequest.js';
import { loadCallDetail } from './callDetail.js';
import type { ConsoleDeps } from './deps.js';
import { mappingFiles } from './mappingsInfo.js';
import { loadOverview } from './overview.js';
import { sendPage } from './render.js';
import { standingWarningsNow } from './standing.js';
import { CallBody } from './views/call.js';
import { CallSearchBody } from './views/calls.js';
import { FailuresBody } from './views/failures.js';
import { Page, type PageProps } from './views/layout.js';
import { MappingsBody } from './views/mappings.js';
import { OverviewBody } from './views/overview.js';
import { ReplayConfirmBody } from './views/replayConfirm.js';
import type { Preview } from '../mapping/preview.js';

type Query = Record<string, string | undefined>;

/** Calls listed on the Calls page, before a search and in its results. */
const RECENT_CALLS = 50;

export function consoleRoutes(deps: ConsoleDeps & { tokenConfigured: boolean }): FastifyPluginAsync {
  const chrome = (query: Query): Pick<PageProps, 'crm' | 'signOut' | 'notice'> => ({
    crm: deps.crm,
    signOut: deps.tokenConfigured ? { csrf: deps.csrf } : undefined,
    notice: /^\d+$/.test(query.replayed ?? '')
      ? `Queued ${query.replayed} call(s) for write-back. They move on as the worker gets to them.`
      : undefined,
  });

  return async (app) => {
    app.get<{ Querystring: Query }>('/console', async (req, reply) => {
      const o = await loadOverview(deps);
      return sendPage(
        reply,
        <Page title="Overview" section="overview" refresh warnings={o.warnings} {...chrome(req.query)}>
          <OverviewBody o={o} />
        </Page>,
      );
    });

    app.get<{ Querystring: Query }>('/console/failures', async (req, reply) => {
      const [groups, warnings] = await Promise.all([
        failureGroups(deps.db, deps.crm),
        standingWarningsNow(deps),
      ]);
      return sendPage(
        reply,
        <Page title="Failures" section="failures" refresh warnings={warnings} {...chrome(req.query)}>
          <FailuresBody groups={groups} csrf={deps.csrf} />
        </Page>,
      );
    });

    app.get<{ Querystring: Query }>('/console/calls', async (req, reply) => {
      const q = (req.query.q ?? '').trim();
      const results = q === '' ? null : await searchCalls(deps.db, deps.crm, q, RECENT_CALLS);
      if (results?.length === 1 && results[0]!.callId === q) {
        return reply.redirect(`/console/calls/${encodeURIComponent(q)}`, 303);
      }
      return sendPage(
        reply,
        <Page title="Calls" section="calls" {...chrome(req.query)}>
          <CallSearchBody
            query={q}
            results={results}
            recent={results === null ? await recentCalls(deps.db, deps.crm, RECENT_CALLS) : []}
          />
        </Page>,
      );
    });

    app.get<{ Params: { id: string }; Querystring: Query }>('/console/calls/:id', async (req, reply) => {
      const detail = await loadCallDetail(deps, req.params.id);
      if (!detail) {
        return sendPage(
          reply,
          <Page title="Call not found" section="calls" {...chrome(req.query)}>
            <p>No call {req.params.id} in the sync-status table.</p>
          </Page>,
          404,
        );
      }
      return sendPage(
        reply,
        <Page title={`Call ${detail.status.callId}`} section="calls" refresh {...chrome(req.query)}>
          <CallBody d={detail} csrf={deps.csrf} crmName={deps.crm === 'hubspot' ? 'HubSpot' : 'Salesforce'} />
        </Page>,
      );
    });

    app.get<{ Querystring: Query }>('/console/mappings', async (req, reply) => {
      const previewId = (req.query.preview ?? '').trim();
      let preview: Preview | null = null;
      let previewError: string | null = null;
      if (previewId && deps.preview) {
        try {
          preview = await deps.preview(previewId);
        } catch (err) {
          const code = (err as { code?: string }).code;
          previewError = `No preview for ${previewId}: ${code ? `${code}: ` : ''}${(err as Error).message}`;
        }
      }
      return sendPage(
        reply,
        <Page title="Mappings" section="mappings" {...chrome(req.query)}>
          <MappingsBody
            files={mappingFiles(deps.configDir, deps.crm)}
            previewId={previewId}
            preview={preview}
            previewError={previewError}
            previewAvailable={deps.preview !== undefined}
          />
        </Page>,
      );
    });

    app.post<{ Body: ReplayInput & { back?: string; confirm?: string } }>(
      '/console/replay',
      async (req, reply) => {
        const body = req.body ?? {};
        let request;
        try {
          request = parseReplayRequest(body);
        } catch (err) {
          if (!(err instanceof ReplayRequestError)) throw err;
          return sendPage(
            reply,
            <Page title="Nothing replayed" section="failures" {...chrome({})}>
              <p class="error">{err.message}</p>
              <p>
                <a href="/console/failures">Back to failures</a>
              </p>
            </Page>,
            400,
          );
        }
        if (request.regenerateFollowups && body.confirm !== 'yes') {
          return sendPage(
            reply,
            <Page title="Generate follow-ups again?" section="failures" {...chrome({})}>
              <ReplayConfirmBody form={body} csrf={deps.csrf} />
            </Page>,
          );
        }
        const result = await runReplay(deps.db, deps.crm, request, new Date(deps.clock.now()));
        deps.onEnqueued();
        return reply.redirect(`${safeBack(body.back)}?replayed=${result.callIds.length}`, 303);
      },
    );
  };
}

/** Only console pages: a form field must not send the admin elsewhere. */
function safeBack(back: unknown): string {
  return typeof back === 'string' && /^\/console(\/[\w%.-]*)*$/.test(back) ? back : '/console/failures';
}
