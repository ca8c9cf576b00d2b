import type { Command } from 'commander';
import { registerMovedCommands } from './moved.js';
import { registerMigrate } from './migrate.js';
import { registerDb } from './db.js';
import { registerMappings } from './mappings.js';
import { openPreviewSource } from './mappingsPreview.js';
import { registerDoctor } from './doctor.js';
import { registerStart } from './start.js';
import { registerStatus } from './status.js';
import { registerReplay } from './replay.js';
import { registerBackfill } from './backfill.js';
import { registerMatch } from './match.js';
import { registerRematch } from './rematch.js';

/** Every subcommand, in the order `crm-sync --help` lists them. */
export function registerCommands(program: Command): void {
  registerStart(program);
  registerStatus(program);
  registerReplay(program);
  registerBackfill(program);
  registerMatch(program);
  registerRematch(program);
  registerMovedCommands(program);
  registerMigrate(program);
  registerDb(program);
  registerMappings(program, { openPreviewSource });
  registerDoctor(program);
}
