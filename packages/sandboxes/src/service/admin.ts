/**
 * The admin API under /_admin (no bearer, no limits, not counted): drive calls through their
 * life, read what clients sent, change faults and settings at run time, replay webhooks.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PlanLimits } from './plans.js';
import { parseReplayRequest, selectReplay } from './events.js';
import { mergeFaults } from './faults.js';
import { parseFaultScript } from './faultScript.js';
import { readJsonBody, sendError, sendJson, type JsonBodyRules } from './http.js';
import type { CallLifecycle } from './lifecycle.js';
import { RETRY_AFTER_FORMATS, type RetryAfterFormat } from './retryAfter.js';
import type { Random } from './rng.js';
import type { SandboxState } from './state.js';
import { callToJson, type Participant } from './types.js';
import type { WebhookDispatcher } from './webhooks.js';

export interface AdminDeps {
  state: SandboxState;
  lifecycle: CallLifecycle;
  dispatcher: WebhookDispatcher;
  random: Random;
}

/** Admin bodies are not held to a JSON content type, unlike the API's. */
const ADMIN_BODY: JsonBodyRules = {
  maxBytes: 1024 * 1024,
  tooLargeMessage: 'admin bodies are limited to 1 MiB',
};
const STATIC_ROUTES = [
  'POST calls',
  'GET counters',
  'POST counters/reset',
  'POST limiter/reset',
  'POST faults',
  'GET faults',
  'POST faults/next',
  'GET faults/next',
  'POST faults/next/reset',
  'GET faults/log',
  'GET events',
  'POST webhooks/replay',
  'POST config',
  'GET config',
];

export function createAdminHandler(deps: AdminDeps) {
  return async (req: IncomingMessage, res: ServerResponse, parts: string[], url: URL): Promise<void> => {
    const method = req.method ?? 'GET';
    const id = parts[1];
    const body = method === 'POST' ? await readJsonBody(req, res, ADMIN_BODY) : { value: undefined };
    if (!body) return;
    const { state } = deps;
    const literal = `${method} ${parts.join('/')}`;
    const route = STATIC_ROUTES.includes(literal)
      ? literal
      : `${method} ${[parts[0], ':id', ...parts.slice(2)].join('/')}`;
    switch (route) {
      case 'POST calls': {
        const input = parseCreateCall(body.value);
        if (typeof input === 'string') return sendError(res, 400, 'invalid_body', input);
        const { complete, ...create } = input;
        const created = deps.lifecycle.createCall(create);
        // Completed in the same tick: no listing ever shows it in progress (tests that mean a
        // finished call must not race the worker's poller between two admin requests).
        const result = complete && created.ok ? deps.lifecycle.completeCall(created.value.id) : created;
        return result.ok
          ? sendJson(res, 201, callToJson(result.value))
          : sendError(res, result.status, result.code, result.message);
      }
      case 'POST calls/:id/complete': {
        const result = deps.lifecycle.completeCall(id as string);
        return result.ok
          ? sendJson(res, 200, callToJson(result.value))
          : sendError(res, result.status, result.code, result.message);
      }
      case 'POST calls/:id/status': {
        const status = (body.value as { status?: unknown } | undefined)?.status;
        if (typeof status !== 'string' || !/^[a-z_]{1,40}$/.test(status))
          return sendError(res, 400, 'invalid_body', 'status must be a lower-case word, e.g. "failed"');
        const result = deps.lifecycle.setStatus(id as string, status);
        return result.ok
          ? sendJson(res, 200, callToJson(result.value))
          : sendError(res, result.status, result.code, result.message);
      }
      case 'GET counters':
        return sendJson(res, 200, state.countersSnapshot());
      case 'POST counters/reset':
        state.counters.reset();
        return sendJson(res, 200, state.countersSnapshot());
      case 'POST limiter/reset':
        state.limiter.reset();
        return sendJson(res, 200, { status: 'reset' });
      case 'POST faults': {
        const faults = mergeFaults(state.settings.faults, body.value ?? {});
        if (typeof faults === 'string') return sendError(res, 400, 'invalid_body', faults);
        state.settings.faults = faults;
        return sendJson(res, 200, faults);
      }
      case 'GET faults':
        return sendJson(res, 200, state.settings.faults);
      case 'POST faults/next': {
        const script = parseFaultScript(body.value, state.settings.faults);
        if (typeof script === 'string') return sendError(res, 400, 'invalid_body', script);
        state.faultScripts.add(script);
        return sendJson(res, 201, script);
      }
      case 'GET faults/next':
        return sendJson(res, 200, state.faultScripts.pending());
      case 'POST faults/next/reset':
        state.faultScripts.clear();
        return sendJson(res, 200, { status: 'reset' });
      case 'GET faults/log': {
        const callId = url.searchParams.get('callId');
        const endpoint = url.searchParams.get('endpoint');
        return sendJson(
          res,
          200,
          state.faultLog.filter(
            (f) => (!callId || f.callId === callId) && (!endpoint || f.endpoint === endpoint),
          ),
        );
      }
      case 'GET contexts/:id':
        if (!state.getCall(id as string)) return sendError(res, 404, 'call_not_found', 'no such call');
        return sendJson(
          res,
          200,
          state.contexts(id as string).map((c) => c.body),
        );
      case 'GET followups/:id':
        if (!state.getCall(id as string)) return sendError(res, 404, 'call_not_found', 'no such call');
        return sendJson(res, 200, state.followups(id as string));
      case 'GET events': {
        const callId = url.searchParams.get('callId');
        return sendJson(
          res,
          200,
          state.events.filter((e) => !callId || e.event.data.call_id === callId).map((e) => e.event),
        );
      }
      case 'POST webhooks/replay': {
        const request = parseReplayRequest(body.value);
        if (typeof request === 'string') return sendError(res, 400, 'invalid_body', request);
        const events = selectReplay(state.events, request, deps.random);
        // Answer once every first attempt is done, so a test can look at its receiver right away.
        await Promise.all(events.map((e) => deps.dispatcher.deliver(e.body)));
        return sendJson(res, 200, { replayed: events.length, events: events.map((e) => e.event.id) });
      }
      case 'POST config': {
        const problem = applyConfig(state, body.value ?? {});
        if (problem) return sendError(res, 400, 'invalid_body', problem);
        return sendJson(res, 200, publicConfig(state));
      }
      case 'GET config':
        return sendJson(res, 200, publicConfig(state));
      default:
        return sendError(res, 404, 'not_found', 'no such admin route');
    }
  };
}

function parseCreateCall(
  value: unknown,
): { id?: string; participant?: Participant; complete?: boolean } | string {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'body must be a JSON object';
  const { id, participant, complete } = value as Record<string, unknown>;
  if (id !== undefined && (typeof id !== 'string' || id === '' || id.includes('/')))
    return 'id must be a non-empty string without /';
  if (complete !== undefined && typeof complete !== 'boolean') return 'complete must be true or false';
  const base = { ...(id !== undefined && { id }), ...(complete === true && { complete }) };
  if (participant === undefined) return base;
  const p = participant as Record<string, unknown>;
  if (typeof p !== 'object' || p === null || typeof p.name !== 'string' || typeof p.email !== 'string') {
    return 'participant needs name and email strings';
  }
  if (p.company !== undefined && typeof p.company !== 'string') return 'participant.company must be a string';
  return {
    ...base,
    participant: {
      name: p.name,
      email: p.email,
      ...(typeof p.company === 'string' && { company: p.company }),
    },
  };
}

function publicConfig(state: SandboxState) {
  return {
    webhookUrl: state.settings.webhookUrl ?? null,
    retryAfterFormat: state.settings.retryAfterFormat,
    recordingRedirect: state.settings.recordingRedirect,
    faults: state.settings.faults,
    limits: state.limits(),
  };
}

/** Applies `{webhookUrl?, retryAfterFormat?, recordingRedirect?, limits?}`; returns a problem or undefined. */
function applyConfig(state: SandboxState, value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'body must be a JSON object';
  const { webhookUrl, retryAfterFormat, recordingRedirect, limits } = value as Record<string, unknown>;
  if (
    webhookUrl !== undefined &&
    webhookUrl !== null &&
    (typeof webhookUrl !== 'string' || !URL.canParse(webhookUrl))
  ) {
    return 'webhookUrl must be an absolute URL or null';
  }
  if (retryAfterFormat !== undefined && !RETRY_AFTER_FORMATS.includes(retryAfterFormat as RetryAfterFormat)) {
    return `retryAfterFormat must be one of ${RETRY_AFTER_FORMATS.join(', ')}`;
  }
  if (recordingRedirect !== undefined && typeof recordingRedirect !== 'boolean')
    return 'recordingRedirect must be a boolean';
  const newLimits = limits === undefined ? undefined : parseLimits(limits, state.limits());
  if (typeof newLimits === 'string') return newLimits;
  if (webhookUrl !== undefined) state.settings.webhookUrl = (webhookUrl as string | null) ?? undefined;
  if (retryAfterFormat !== undefined) state.settings.retryAfterFormat = retryAfterFormat as RetryAfterFormat;
  if (recordingRedirect !== undefined) state.settings.recordingRedirect = recordingRedirect as boolean;
  if (newLimits) state.limiter.setLimits(newLimits);
  return undefined;
}

function parseLimits(value: unknown, current: PlanLimits): PlanLimits | string {
  if (typeof value !== 'object' || value === null) return 'limits must be an object';
  const next = { ...current };
  const v = value as Record<string, unknown>;
  for (const key of ['ratePerMinute', 'burstPerSecond'] as const) {
    if (v[key] === undefined) continue;
    if (!Number.isInteger(v[key]) || (v[key] as number) < 1) return `limits.${key} must be an integer >= 1`;
    next[key] = v[key] as number;
  }
  if (v.dailyCap !== undefined) {
    if (v.dailyCap !== null && (!Number.isInteger(v.dailyCap) || (v.dailyCap as number) < 0)) {
      return 'limits.dailyCap must be an integer >= 0 or null';
    }
    next.dailyCap = v.dailyCap as number | null;
  }
  return next;
}
