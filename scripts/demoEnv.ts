/**
 * The demo's worker environment: none of the admin's crm-sync settings (environment or
 * `${CONFIG_DIR}/crm-sync.yaml`) reach it, so a configured DATABASE_URL (a production database) is
 * never opened; it runs on its own data directory with the shipped mappings.
 */
import { cpSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { readConfigFile } from '../src/config/config.js';
import { rawConfigSchema } from '../src/config/schema.js';

type Env = Record<string, string | undefined>;

/** Settings that would point the demo somewhere real; named in the demo's one-line notice. */
const PLACE_KEYS = ['DATABASE_URL', 'DATA_DIR', 'CONFIG_DIR'];

export interface DemoEnvironment {
  /** The inherited environment without any crm-sync setting, plus the demo's own. */
  env: Env;
  /** "DATABASE_URL (environment)", "DATABASE_URL (config/crm-sync.yaml)", ...: what is ignored. */
  ignored: string[];
}

/** Builds the environment and prepares `<dataDir>/config` holding the shipped mappings. */
export function demoEnvironment(processEnv: Env, root: string, dataDir: string, own: Env): DemoEnvironment {
  const known = new Set(Object.keys(rawConfigSchema.shape));
  const ignored = PLACE_KEYS.filter((k) => processEnv[k]?.trim()).map((k) => `${k} (environment)`);
  const adminConfigDir = processEnv.CONFIG_DIR?.trim() || './config';
  const file = path.join(adminConfigDir, 'crm-sync.yaml');
  try {
    const { settings } = readConfigFile(adminConfigDir);
    for (const k of PLACE_KEYS) if (settings[k]?.trim()) ignored.push(`${k} (${file})`);
  } catch {
    // An unreadable file is ignored all the same: the demo does not use it.
  }
  const configDir = path.join(dataDir, 'config');
  mkdirSync(configDir, { recursive: true });
  cpSync(path.join(root, 'config', 'mappings'), path.join(configDir, 'mappings'), { recursive: true });
  const inherited = Object.fromEntries(Object.entries(processEnv).filter(([k]) => !known.has(k)));
  return {
    env: { ...inherited, CONFIG_DIR: configDir, DATA_DIR: dataDir, ...own },
    ignored,
  };
}

/** The demo's one line about where its data lives and which settings it leaves alone. */
export function demoDatabaseNotice(relativeDataDir: string, ignored: string[]): string {
  const base = `The demo uses its own embedded database in ${relativeDataDir}`;
  return ignored.length === 0
    ? `${base}.`
    : `${base} and ignores ${ignored.join(', ')}: your configured database is not touched.`;
}
