import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseConfig, type AppConfig } from '../../src/config/config.js';
import { rawConfigSchema } from '../../src/config/schema.js';
import type { CrmName } from '../../src/crm/types.js';
import type { HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import type { SalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import type { ServiceSandbox } from '@crm-sync/sandboxes/service';

export type Env = Record<string, string | undefined>;

export const REPO_ROOT = path.join(import.meta.dirname, '..', '..');
/** The shipped mapping files. */
export const CONFIG_DIR = path.join(REPO_ROOT, 'config');

/** Settings for doctor/preview against the Service sandbox and one CRM sandbox. */
export function hubspotEnv(svc: ServiceSandbox, hs: HubSpotSandbox, over: Env = {}): Env {
  return {
    ...serviceEnv(svc),
    CRM: 'hubspot',
    HUBSPOT_BASE_URL: hs.url,
    HUBSPOT_ACCESS_TOKEN: hs.accessToken,
    ...over,
  };
}

export function salesforceEnv(svc: ServiceSandbox, sf: SalesforceSandbox, over: Env = {}): Env {
  return {
    ...serviceEnv(svc),
    CRM: 'salesforce',
    SALESFORCE_INSTANCE_URL: sf.url,
    SALESFORCE_LOGIN_URL: sf.url,
    SALESFORCE_ACCESS_TOKEN: sf.accessToken,
    ...over,
  };
}

function serviceEnv(svc: ServiceSandbox): Env {
  return {
    SERVICE_API_BASE_URL: svc.url,
    SERVICE_API_KEY: svc.apiKey,
    SERVICE_WEBHOOK_SECRET: svc.webhookSecret,
    CONFIG_DIR,
  };
}

export function configFrom(env: Env): AppConfig {
  return parseConfig(env, { require: { service: true, crm: true } });
}

/** An output sink that keeps what was written. */
export function captureIo(): { out(text: string): void; text(): string } {
  const chunks: string[] = [];
  return { out: (text) => chunks.push(text), text: () => chunks.join('\n') };
}

/** An analysed sandbox call of the participant with this email, as the API shows it. */
export function analyzedCallOf(svc: ServiceSandbox, email: string) {
  const record = svc.state
    .calls()
    .find((c) => c.status === 'analyzed' && c.participant.email === email && c.analysis);
  if (!record?.analysis) throw new Error(`no analysed sandbox call for ${email}`);
  return { id: record.id, scoring: record.analysis.scoring };
}

/** The process environment without any crm-sync setting, plus `env`: for child processes. */
export function childEnv(env: Env): NodeJS.ProcessEnv {
  const known = new Set(Object.keys(rawConfigSchema.shape));
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !known.has(k)));
  return { ...base, ...env, LOG_LEVEL: 'silent' };
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let keys: { publicKeyPem: string } | undefined;

/** One JWT key pair per test file: the Salesforce sandbox would generate one per start. */
export function jwtKeys(): { publicKeyPem: string } {
  keys ??= {
    publicKeyPem: generateKeyPairSync('rsa', { modulusLength: 2048 })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString(),
  };
  return keys;
}

const dirs: string[] = [];

/** A config dir holding `mappings/<crm>.yaml` with `text`. */
export function configDirWith(crm: CrmName, text: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'crm-sync-cli-'));
  dirs.push(dir);
  mkdirSync(path.join(dir, 'mappings'));
  writeFileSync(path.join(dir, 'mappings', `${crm}.yaml`), text);
  return dir;
}

export function removeConfigDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Runs `npx tsx src/cli/main.ts ...args` from the repository root with exactly these settings. */
export function crmSync(
  args: string[],
  env: Env,
  /** Commands that open a database need longer on a loaded machine. */
  timeoutMs = 25_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'npx',
      ['tsx', 'src/cli/main.ts', ...args],
      { cwd: REPO_ROOT, env: childEnv(env), timeout: timeoutMs },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
