/**
 * Whether the CRM accepts the worker's credentials, as readiness, status, a gauge and the logs see
 * it; a cheap probe on the injected clock finds them accepted again and releases the held jobs. How:
 * docs/reliability.md, "CRM credentials rejected and accepted again".
 */
import { rejectionMessage, type CredentialAdvice } from '../crm/credentials.js';
import { CrmAuthError } from '../crm/errors.js';
import type { ReadinessCheckResult } from '../http/types.js';
import type { Logger } from '../log/logger.js';
import type { Db } from '../store/database.js';
import { releaseHeldJobs } from '../store/jobAdmin.js';
import type { Clock } from '../util/clock.js';

export const PROBE_EVERY_MS = 30_000;
const CODE = 'CRM_AUTH';

export interface CredentialState {
  crm: string;
  credential: string;
  /** null until the first probe or job says. */
  accepted: boolean | null;
  /** While rejected: which credential and what to do. */
  detail: string | null;
  rejectedSince: string | null;
}

export interface CrmCredentialMonitor {
  /** A job met CRM_AUTH: marks the credentials rejected; returns what to record on the call. */
  rejected(err: CrmAuthError): string;
  /** Probes now (also what the timer does); resolves once the outcome is applied. */
  probe(): Promise<void>;
  state(): CredentialState;
  readiness(): ReadinessCheckResult;
  start(): void;
  /** No more probes; waits for one in flight. */
  stop(): Promise<void>;
}

export function createCrmCredentialMonitor(deps: {
  db: Db;
  advice: CredentialAdvice;
  /** The adapter's checkCredentials. */
  check: () => Promise<void>;
  clock: Clock;
  logger: Logger;
  /** Told 1 on acceptance, 0 on rejection (the crmsync_crm_credentials_ok gauge). */
  setGauge?: (ok: 0 | 1) => void;
  /** Held jobs were made due: wake the runner. */
  onReleased?: () => void;
  probeEveryMs?: number;
}): CrmCredentialMonitor {
  const { clock, advice } = deps;
  const log = deps.logger.child({ crm: advice.crm });
  let accepted: boolean | null = null;
  let detail: string | null = null;
  let rejectedSince: number | null = null;
  let timer: unknown;
  let probing: Promise<void> | null = null;
  let stopped = false;

  function markRejected(status: number | undefined): string {
    const message = rejectionMessage(advice, status);
    if (accepted !== false) {
      accepted = false;
      detail = message;
      rejectedSince = clock.now();
      deps.setGauge?.(0);
      log.warn({ credential: advice.credential }, message);
    }
    scheduleProbe();
    return message;
  }

  async function markAccepted(): Promise<void> {
    const was = accepted;
    accepted = true;
    detail = null;
    rejectedSince = null;
    deps.setGauge?.(1);
    clock.clearTimer(timer);
    timer = undefined;
    if (was === false) log.info({ credential: advice.credential }, `${advice.credential} accepted again`);
    if (stopped) return;
    const released = await releaseHeldJobs(deps.db, { code: CODE, now: new Date(clock.now()) });
    if (released > 0) {
      log.info({ released }, 'jobs held back by rejected CRM credentials run now');
      deps.onReleased?.();
    }
  }

  function scheduleProbe(): void {
    if (stopped || timer !== undefined) return;
    timer = clock.setTimer(() => {
      timer = undefined;
      void probe();
    }, deps.probeEveryMs ?? PROBE_EVERY_MS);
  }

  async function runProbe(): Promise<void> {
    try {
      await deps.check();
    } catch (err) {
      if (err instanceof CrmAuthError) markRejected(err.status);
      else {
        // Unreachable or rate limited: says nothing about the credentials; look again later.
        log.debug({ err }, 'CRM credential probe inconclusive');
        if (accepted === false) scheduleProbe();
      }
      return;
    }
    await markAccepted();
  }

  function probe(): Promise<void> {
    probing ??= runProbe()
      .catch((err: unknown) => {
        log.warn({ err }, 'CRM credential probe failed');
        if (accepted === false) scheduleProbe();
      })
      .finally(() => {
        probing = null;
      });
    return probing;
  }

  return {
    rejected: (err) => markRejected(err.status),
    probe,
    state: () => ({
      crm: advice.crm,
      credential: advice.credential,
      accepted,
      detail,
      rejectedSince: rejectedSince === null ? null : new Date(rejectedSince).toISOString(),
    }),
    readiness: () =>
      accepted === false
        ? { ok: false, detail: detail ?? `${advice.credential} rejected` }
        : { ok: true, detail: accepted ? `${advice.credential} accepted` : 'not checked yet' },
    start() {
      void probe();
    },
    async stop() {
      stopped = true;
      clock.clearTimer(timer);
      timer = undefined;
      await probing;
    },
  };
}
