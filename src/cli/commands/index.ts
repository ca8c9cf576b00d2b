import type { Command } from 'commander';
import { registerSandbox } from './sandbox.js';

/** Every subcommand, in the order `crm-sync --help` lists them. */
export function registerCommands(program: Command): void {
  registerSandbox(program);
}
