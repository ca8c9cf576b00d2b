import type { Command } from 'commander';
import { UsageError } from '../usageError.js';

/**
 * Commands that left crm-sync say where they went rather than "unknown command". `crm-sync sandbox`
 * ran the local stand-ins of the Service, HubSpot and Salesforce until they moved to the
 * development package packages/sandboxes (never part of an installation).
 */
export function registerMovedCommands(program: Command): void {
  program
    .command('sandbox', { hidden: true })
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[args...]')
    .action(() => {
      throw new UsageError(
        'the sandboxes are not part of crm-sync: from a source checkout, after npm ci, run `npx crm-sync-sandbox <service|hubspot|salesforce>` (packages/sandboxes)',
      );
    });
}
