import type { Command } from 'commander';
import type { AppConfig } from '../../config/config.js';

/**
 * `crm-sync match EMAIL`: runs the match rules against the live CRM for one participant and prints
 * the decision with its reasons (Gong's "simulate"). Reads only; writes nothing anywhere.
 */
export function registerMatch(program: Command): void {
  program
    .command('match')
    .description(
      'Show which CRM contact, company and deal a participant would be matched to, and why (writes nothing)',
    )
    .argument('<email>', "the participant's email address")
    .option('--company <name>', "the participant's company, as the Service would send it")
    .option('--name <name>', "the participant's name")
    .option('--json', 'print JSON')
    .action(async (email: string, opts: { company?: string; name?: string; json?: boolean }) => {
      // Checked before any setting or CRM request: a name or id here is a mistake, not a lookup.
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
        const { UsageError } = await import('../usageError.js');
        throw new UsageError(
          `expected a participant's email address such as jane@acme.example, got "${email}"`,
        );
      }
      const { loadConfig } = await import('../../config/config.js');
      const { loadMappings, lookupFieldsFor, dealRuleFor } = await import('../../mapping/index.js');
      const { createCrmAdapter } = await import('../../crm/factory.js');
      const { formatDecision } = await import('../../crm/match/format.js');
      const { holdProcessOpen } = await import('../keepAlive.js');
      const config = loadConfig({ require: { crm: true } });
      const mapping = loadMappings(config.configDir, config.crm);
      const { openRefreshTokens } = await import('../workerDb.js');
      const tokens = await openRefreshTokens(config);
      const crm = await createCrmAdapter(config, { refreshTokens: tokens?.refreshTokens });
      const release = holdProcessOpen();
      const found = await crm
        .lookup(
          { email, name: opts.name, company: opts.company },
          lookupFieldsFor(mapping),
          dealRuleFor(mapping),
        )
        .catch(async (err: unknown) => Promise.reject(await plainCrmRefusal(err, config)))
        .finally(() => {
          release();
          return tokens?.close();
        });
      if (opts.json) {
        console.log(JSON.stringify(found, null, 2));
        return;
      }
      const d = found.decision?.deal;
      const labels = new Map<string, string | null>((d?.rejected ?? []).map((r) => [r.id, r.label]));
      if (d?.id) labels.set(d.id, d.label);
      const deals = found.deals.map((x, i) => `  ${i + 1}. ${labels.get(x.id) ?? ''} [${x.id}]`).join('\n');
      console.log(
        [
          found.decision ? formatDecision(found.decision) : `matched by: ${found.matchedBy}`,
          '',
          `open deals offered as context (deal rule ${mapping.dealRule.orderBy}, limit ${mapping.dealRule.limit}):`,
          deals === '' ? '  none' : deals,
          `owner: ${found.owner ? found.owner.id : 'none'}`,
        ].join('\n'),
      );
    });
}

/** A rejected credential as one sentence naming the setting and the fix, not the CRM's raw 401. */
async function plainCrmRefusal(err: unknown, config: AppConfig): Promise<unknown> {
  const { CrmAuthError } = await import('../../crm/errors.js');
  if (!(err instanceof CrmAuthError)) return err;
  const { credentialAdvice } = await import('../../crm/credentials.js');
  const { SetupError } = await import('../../config/setupError.js');
  const advice = credentialAdvice(config);
  return new SetupError(`The ${advice.credential} was rejected.`, `To fix: ${advice.fix}.`);
}
