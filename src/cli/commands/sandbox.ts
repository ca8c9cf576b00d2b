import type { Command } from 'commander';
import { UsageError } from '../usageError.js';

/**
 * `crm-sync sandbox` ran the local stand-ins of the Service, HubSpot and Salesforce until they
 * moved to the development package packages/sandboxes (never part of an installation): say where
 * they went rather than "unknown command".
 */
export function registerSandboxMoved(program: Command): void {
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
