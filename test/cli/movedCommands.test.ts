/** `crm-sync sandbox …` says where the sandboxes went (packages/sandboxes) instead of "unknown command". */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerMovedCommands } from '../../src/cli/commands/moved.js';
import { UsageError } from '../../src/cli/usageError.js';

describe('moved commands', () => {
  it('crm-sync sandbox, with any arguments, is a usage error naming npx crm-sync-sandbox', async () => {
    const program = new Command().exitOverride();
    registerMovedCommands(program);
    const run = program.parseAsync(['node', 'crm-sync', 'sandbox', 'service', '--port', '0']);
    await expect(run).rejects.toBeInstanceOf(UsageError);
    await expect(run).rejects.toThrow(/npx crm-sync-sandbox <service\|hubspot\|salesforce>/);
  });

  it('is hidden from the help', () => {
    const program = new Command();
    registerMovedCommands(program);
    expect(program.helpInformation()).not.toMatch(/sandbox/);
  });
});
