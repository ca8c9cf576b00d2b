/**
 * Calls arriving while a scenario runs: live calls started and completed through the Service
 * sandbox (their webhooks reach the worker), finished calls that only a poll finds, and replays of
 * earlier webhooks, duplicated and shuffled, as a real webhook sender's retries would be.
 */
import { addAnalysedCalls, matchingParticipant } from '../../bench/worker/harness.js';
import type { ServiceSandbox } from '@crm-sync/sandboxes/service';
import type { Random } from '@crm-sync/sandboxes/service/rng';
import { completeCall, createCall, post, type Person } from '../../test/e2e/harness.js';

export interface LoadOptions {
  /** How many calls to make in all (live and poll-only together). */
  calls: number;
  /** Share of calls made as finished calls only a poll finds (default 0.25). */
  pollOnlyShare?: number;
  /** Pause between steps, picked between these (default 300..1200 ms): the pace of arrivals. */
  stepMs?: [number, number];
  /** Who the n-th live call is with (default: people the HubSpot sandbox knows, by email or domain). */
  participant?: (n: number) => Person;
}

export class CallLoad {
  readonly callIds: string[] = [];
  private readonly live: string[] = [];
  replays = 0;
  errors = 0;

  constructor(
    private readonly svc: ServiceSandbox,
    private readonly random: Random,
    private readonly options: LoadOptions,
  ) {}

  /** Makes calls until `options.calls` exist and all live ones are completed, or `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const [lo, hi] = this.options.stepMs ?? [300, 1200];
    while (!signal.aborted && (this.callIds.length < this.options.calls || this.live.length > 0)) {
      await this.step().catch(() => this.errors++);
      await new Promise((resolve) => setTimeout(resolve, lo + this.random() * (hi - lo)));
    }
  }

  /** Replays one call's webhooks duplicated and shuffled (not awaited by the caller's clock). */
  replay(): void {
    const callId = this.callIds[Math.floor(this.random() * this.callIds.length)];
    if (!callId) return;
    this.replays++;
    void post(`${this.svc.url}/_admin/webhooks/replay`, {
      callId,
      duplicate: 2 + Math.floor(this.random() * 2),
      shuffle: true,
    }).catch(() => this.errors++);
  }

  private async step(): Promise<void> {
    const roll = this.random();
    const room = this.callIds.length < this.options.calls;
    if (room && roll < (this.options.pollOnlyShare ?? 0.25) * 0.6) {
      const [id] = addAnalysedCalls(this.svc, 1, Math.floor(this.random() * 2 ** 31), {
        spanMs: 0,
        leadMs: 0,
      });
      this.callIds.push(id!);
    } else if (room && roll < 0.6) {
      const participant = (this.options.participant ?? matchingParticipant)(this.callIds.length);
      const id = await createCall(this.svc, participant);
      this.callIds.push(id);
      this.live.push(id);
    } else if (this.live.length > 0 && roll < 0.85) {
      const [id] = this.live.splice(Math.floor(this.random() * this.live.length), 1);
      await completeCall(this.svc, id!);
    } else {
      this.replay();
    }
  }
}
