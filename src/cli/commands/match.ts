import type { Command } from 'commander';

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
