/**
 * Scripted faults for deterministic tests: `POST /_admin/faults/next` queues "the next `count`
 * requests matching `match` (an endpoint label such as `POST /v1/calls/:id/followups`, optionally
 * for one `callId`) get this fault". A scripted fault wins over the random rates; scripts are
 * used in the order they were queued.
 */
import type { ErrorStatus, FaultDecision, FaultSettings } from './faults.js';

export interface FaultScript {
  match: string;
  callId?: string;
  fault: Exclude<FaultDecision, { kind: 'none' }>;
  remaining: number;
}

const STATUSES = [429, 500, 502, 503];

/**
 * Parses `{match, callId?, count?, status | stall | drop, acted?, retryAfter?}`:
 * `status` 429/500/502/503, `stall` true or a duration in ms, `drop` "before" or "mid";
 * `acted` (500/502/stall, default false) runs the handler before failing.
 */
export function parseFaultScript(value: unknown, settings: FaultSettings): FaultScript | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return 'body must be a JSON object';
  const v = value as Record<string, unknown>;
  if (typeof v.match !== 'string' || !/^[A-Z]+ \/\S+$/.test(v.match))
    return 'match must be an endpoint label such as "POST /v1/calls/:id/followups"';
  if (v.callId !== undefined && (typeof v.callId !== 'string' || v.callId === ''))
    return 'callId must be a non-empty string';
  const count = v.count ?? 1;
  if (!Number.isInteger(count) || (count as number) < 1) return 'count must be an integer >= 1';
  if (v.acted !== undefined && typeof v.acted !== 'boolean') return 'acted must be a boolean';
  const kinds = ['status', 'stall', 'drop'].filter((k) => v[k] !== undefined);
  if (kinds.length !== 1) return 'give exactly one of status, stall, drop';
  const fault = parseFault(v, settings);
  if (typeof fault === 'string') return fault;
  return {
    match: v.match,
    ...(typeof v.callId === 'string' && { callId: v.callId }),
    fault,
    remaining: count as number,
  };
}

function parseFault(v: Record<string, unknown>, settings: FaultSettings): FaultScript['fault'] | string {
  const acted = v.acted === true;
  if (v.drop !== undefined) {
    if (v.drop !== 'before' && v.drop !== 'mid') return 'drop must be "before" or "mid"';
    return { kind: 'drop', phase: v.drop };
  }
  if (v.stall !== undefined) {
    if (v.stall === true) return { kind: 'stall', ms: settings.stallMs, acted };
    if (typeof v.stall !== 'number' || !Number.isFinite(v.stall) || v.stall < 0)
      return 'stall must be true or a number of ms';
    return { kind: 'stall', ms: v.stall, acted };
  }
  if (!STATUSES.includes(v.status as number)) return `status must be one of ${STATUSES.join(', ')}`;
  if (v.status === 429) {
    const retryAfter = v.retryAfter ?? settings.throttleRetryAfterS;
    if (!Number.isInteger(retryAfter) || (retryAfter as number) < 0)
      return 'retryAfter must be an integer >= 0';
    return { kind: 'throttle', retryAfterS: retryAfter as number };
  }
  if (v.status === 503 && acted) return 'a 503 never acts (it says the request was not taken)';
  return { kind: 'error', status: v.status as ErrorStatus, html: false, acted };
}

/** The queue of scripted faults. */
export class FaultScripts {
  private scripts: FaultScript[] = [];

  add(script: FaultScript): void {
    this.scripts.push(script);
  }

  /** Takes one use of the first script matching the request, if any. */
  take(endpoint: string, callId: string | undefined): FaultScript['fault'] | undefined {
    const script = this.scripts.find(
      (s) => s.match === endpoint && (s.callId === undefined || s.callId === callId),
    );
    if (!script) return undefined;
    script.remaining--;
    if (script.remaining === 0) this.scripts = this.scripts.filter((s) => s !== script);
    return script.fault;
  }

  pending(): FaultScript[] {
    return this.scripts.map((s) => ({ ...s }));
  }

  clear(): void {
    this.scripts = [];
  }
}
