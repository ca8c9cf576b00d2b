/**
 * Secret values for one chaos run. Each is distinctive (a fixed marker plus random hex) so a scan
 * of the run's logs for it cannot hit by accident, and every scenario uses the same set, so the
 * secrets scenario knows what to look for.
 */
import { randomBytes } from 'node:crypto';

export interface SuiteSecrets {
  serviceApiKey: string;
  webhookSecret: string;
  hubspotToken: string;
  databasePassword: string;
}

export class SecretRegistry {
  private readonly values = new Map<string, string>();
  readonly suite: SuiteSecrets;

  constructor() {
    const mark = (what: string) => `chaos${what}${randomBytes(12).toString('hex')}`;
    this.suite = {
      serviceApiKey: mark('SvcKey'),
      webhookSecret: mark('WhSecret'),
      hubspotToken: `pat-na1-${mark('HsToken')}`,
      databasePassword: mark('DbPass'),
    };
    for (const [name, value] of Object.entries(this.suite)) this.add(name, value);
  }

  /** Adds a secret made during the run (e.g. a token a sandbox issued). */
  add(name: string, value: string): void {
    if (value.length >= 12) this.values.set(value, name);
  }

  entries(): { name: string; value: string }[] {
    return [...this.values].map(([value, name]) => ({ name, value }));
  }
}
