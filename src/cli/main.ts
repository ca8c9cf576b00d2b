import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/config.js';
import { SetupError } from '../config/setupError.js';
import { MappingError } from '../mapping/errors.js';
import { registerCommands } from './commands/index.js';
import { UsageError } from './usageError.js';
import { VERSION } from '../version.js';

const program = new Command()
  .name('crm-sync')
  .description('Syncs the coaching Service with HubSpot or Salesforce.')
  .version(VERSION)
  .showHelpAfterError()
  .exitOverride();

registerCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  // The admin's to fix: the message alone (it names the fix), and 2, which systemd does not restart.
  if (err instanceof ConfigError || err instanceof SetupError || err instanceof MappingError) {
    console.error(err.message);
    process.exit(2);
  }
  console.error(`crm-sync: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(err instanceof UsageError ? 2 : 1);
}
