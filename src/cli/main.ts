import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/config.js';
import { registerCommands } from './commands/index.js';
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
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  console.error(`crm-sync: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
