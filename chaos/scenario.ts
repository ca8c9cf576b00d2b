/**
 * What a chaos scenario is: a named, time-boxed run of the real worker under one kind of fault that
 * ends in a verdict and a few figures for the table. To add one, write chaos/scenarios/NAME.ts
 * exporting a `Scenario` and list it in chaos/scenarios/index.ts.
 */
import type { Random } from '@crm-sync/sandboxes/service/rng';
import type { SecretRegistry } from './lib/secrets.js';

export interface ScenarioContext {
  /** The run's seed; `random` is derived from it (one seeded RNG per scenario, so order is irrelevant). */
  seed: number;
  random: Random;
  /** A directory of this scenario's own: child process logs, CLI output, scratch data. */
  dir: string;
  /** The whole run's directory (the secrets scenario scans it). */
  runDir: string;
  /** Every secret value handed to a child process in this run, for the secrets scan. */
  secrets: SecretRegistry;
  /** Aborted when the scenario's budget is spent: long waits should give up then. */
  signal: AbortSignal;
  /** Progress for the operator (stderr), with the scenario's name in front. */
  log(message: string): void;
}

/** One figure in the table: `kills: 20`, `leader moved: 31.2 s`. */
export type Figures = Record<string, string | number>;

export interface ScenarioResult {
  pass: boolean;
  figures: Figures;
  /** Why it failed (each broken promise, briefly); printed under the table. */
  failures: string[];
}

export interface Scenario {
  name: string;
  /** One line: the fault and what is checked. */
  description: string;
  /** Wall-clock budget; the runner aborts `signal` at the end and fails the scenario if it overruns. */
  budgetMs: number;
  run(ctx: ScenarioContext): Promise<ScenarioResult>;
}

/** Collects failed checks and figures, then makes the result. */
export class Verdict {
  readonly figures: Figures = {};
  readonly failures: string[] = [];

  figure(name: string, value: string | number): void {
    this.figures[name] = value;
  }

  /** Records `message` as a failure unless `ok`. */
  check(ok: boolean, message: string): boolean {
    if (!ok) this.failures.push(message);
    return ok;
  }

  result(): ScenarioResult {
    return { pass: this.failures.length === 0, figures: this.figures, failures: this.failures };
  }
}
