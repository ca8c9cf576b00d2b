import type { Command } from 'commander';
import { ConfigError, parseConfig, type AppConfig } from '../../config/config.js';
import type { SetupCheck } from '../../crm/types.js';
import type { Logger } from '../../log/logger.js';
import { formatProblem, MappingError } from '../../mapping/errors.js';
import { loadMappings, mappingFilePath } from '../../mapping/load.js';
import { requiredFields } from '../../mapping/requirements.js';
import type { Mapping } from '../../mapping/types.js';
import type { Clock } from '../../util/clock.js';
import { holdProcessOpen } from '../keepAlive.js';
import { checkDatabase } from './doctorDatabase.js';
import { checkServiceKey } from './doctorService.js';

export interface DoctorOptions {
  /** HubSpot: create missing custom properties. Salesforce: only explains (its API cannot). */
  fix?: boolean | undefined;
  json?: boolean | undefined;
}

export interface DoctorIo {
  out(text: string): void;
}

export interface DoctorDeps {
  clock?: Clock | undefined;
  logger?: Logger | undefined;
}

const CRM_LABEL = { hubspot: 'HubSpot', salesforce: 'Salesforce' } as const;

/**
 * `crm-sync doctor`: the configuration, the mapping, the Service key (one `GET /v1/calls?limit=1`)
 * and the CRM (credentials and every custom field the mapping needs). Writes a checklist (or JSON)
 * to `io.out` and returns the exit code: 0 when every check passed, else 1. Never prints a secret.
 */
export async function runDoctor(
  config: AppConfig,
  io: DoctorIo,
  options: DoctorOptions = {},
  deps: DoctorDeps = {},
): Promise<number> {
  const release = holdProcessOpen();
  let checks: SetupCheck[];
  try {
    checks = await collectChecks(config, options, deps);
  } finally {
    release();
  }
  const text = options.json
    ? JSON.stringify({ ok: checks.every((c) => c.ok), crm: config.crm, checks }, null, 2)
    : formatChecklist(checks, config.crm);
  io.out(scrubSecrets(text, secretsOf(config)));
  return checks.every((c) => c.ok) ? 0 : 1;
}

/** Loads the configuration from `env` (and the optional file), then runs the doctor. */
export async function runDoctorFromEnv(
  env: Record<string, string | undefined>,
  io: DoctorIo,
  options: DoctorOptions = {},
  deps: DoctorDeps = {},
): Promise<number> {
  let config: AppConfig;
  try {
    config = parseConfig(env, { require: { service: true, crm: true } });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // ConfigError never echoes a secret's value; its problems name the variables.
    const check: SetupCheck = { name: 'configuration', ok: false, detail: err.problems.join('\n') };
    io.out(options.json ? JSON.stringify({ ok: false, checks: [check] }, null, 2) : formatChecklist([check]));
    return 1;
  }
  return runDoctor(config, io, options, deps);
}

async function collectChecks(
  config: AppConfig,
  options: DoctorOptions,
  deps: DoctorDeps,
): Promise<SetupCheck[]> {
  const checks: SetupCheck[] = [
    {
      name: 'configuration',
      ok: true,
      detail: `CRM ${config.crm}, Service ${config.service.baseUrl} (plan ${config.service.plan})`,
    },
  ];
  let mapping: Mapping | null = null;
  const file = mappingFilePath(config.configDir, config.crm);
  try {
    mapping = loadMappings(config.configDir, config.crm);
    const fields = requiredFields(mapping).length;
    checks.push({ name: 'mapping', ok: true, detail: `${file} (${fields} custom fields to check)` });
  } catch (err) {
    if (!(err instanceof MappingError)) throw err;
    checks.push({
      name: 'mapping',
      ok: false,
      detail: err.problems.map(formatProblem).join('\n'),
      fix: `correct ${file}, then run "crm-sync mappings check"; the CRM fields are not checked meanwhile`,
    });
  }
  checks.push(await checkDatabase(config));
  // Heavy parts (the SDKs, the HTTP client) load only when the command runs: `--help` stays quick.
  const { openServiceFromConfig } = await import('../serviceFromConfig.js');
  checks.push(await checkServiceKey(openServiceFromConfig, config, deps));
  const crmChecks = await checkCrm(config, mapping, options.fix === true, deps);
  checks.push(...crmChecks.map((c) => c.named));
  const { standingChecks } = await import('./doctorStanding.js');
  checks.push(
    ...(await standingChecks(
      config,
      crmChecks.map((c) => c.raw),
    )),
  );
  return checks;
}

async function checkCrm(
  config: AppConfig,
  mapping: Mapping | null,
  fix: boolean,
  deps: DoctorDeps,
): Promise<{ raw: SetupCheck; named: SetupCheck }[]> {
  const label = CRM_LABEL[config.crm];
  const settings = `the ${config.crm === 'hubspot' ? 'HUBSPOT_' : 'SALESFORCE_'}* settings`;
  // A rejected credential names the setting in use and how to renew it, not a family of settings.
  const { credentialAdvice } = await import('../../crm/credentials.js');
  const advice = credentialAdvice(config);
  const named = (c: SetupCheck): SetupCheck => ({
    ...c,
    name: `${label} ${c.name}`,
    fix: !c.ok && c.name === 'credentials' ? advice.fix : c.fix,
  });
  const { createCrmAdapter } = await import('../../crm/factory.js');
  const { openRefreshTokens } = await import('../workerDb.js');
  let tokens: Awaited<ReturnType<typeof openRefreshTokens>>;
  try {
    tokens = await openRefreshTokens(config);
    const adapter = await createCrmAdapter(config, {
      clock: deps.clock,
      logger: deps.logger,
      mapping: mapping ?? undefined,
      refreshTokens: tokens?.refreshTokens,
    });
    // Without a valid mapping only the credentials can be checked.
    const report = await adapter.verifySetup(mapping ? requiredFields(mapping) : [], { fix });
    return report.checks.map((raw) => ({ raw, named: named(raw) }));
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    const { CrmAuthError } = await import('../../crm/errors.js');
    const raw: SetupCheck =
      err instanceof CrmAuthError
        ? { name: 'credentials', ok: false, detail: `${advice.credential} rejected` }
        : {
            name: 'connection',
            ok: false,
            detail: `could not check: ${reason}`,
            fix: `check ${settings} and that ${label} is reachable from here`,
          };
    return [{ raw, named: named(raw) }];
  } finally {
    await tokens?.close();
  }
}

/** The checklist as the terminal shows it: one ✔/✖ line per check, details and fixes indented. */
export function formatChecklist(checks: SetupCheck[], crm?: AppConfig['crm']): string {
  const lines: string[] = [];
  for (const c of checks) {
    const [first = '', ...more] = c.detail.split('\n');
    lines.push(`${c.ok ? (c.warn ? '⚠' : '✔') : '✖'} ${c.name}: ${first}`);
    lines.push(...more.map((l) => `    ${l}`));
    if (c.fix) lines.push(`    ${c.ok && !c.warn ? '' : 'to fix: '}${c.fix}`);
  }
  const failed = checks.filter((c) => !c.ok).length;
  lines.push('');
  if (failed === 0) lines.push(`All ${checks.length} checks passed.`);
  else {
    lines.push(`${failed} of ${checks.length} checks failed.`);
    if (crm === 'hubspot' && checks.some((c) => !c.ok && /doctor --fix/.test(c.fix ?? ''))) {
      lines.push('Run "crm-sync doctor --fix" to create the missing HubSpot properties.');
    }
  }
  return lines.join('\n');
}

/** Every secret value of the configuration, so that no output can carry one. */
export function secretsOf(config: AppConfig): string[] {
  const { service, hubspot, salesforce } = config;
  return [
    service.apiKey,
    ...service.webhookSecrets,
    hubspot.accessToken,
    hubspot.clientSecret,
    hubspot.refreshToken,
    salesforce.accessToken,
    salesforce.clientSecret,
    salesforce.refreshToken,
    salesforce.jwtPrivateKey,
    config.credentialsKey,
  ].filter((s): s is string => Boolean(s));
}

/** Shorter values are not scrubbed: a one-letter test secret would blank out every "s". */
const MIN_SCRUBBED_LENGTH = 8;

/** Blanks out each secret: the error texts should hold none, this makes sure. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  return secrets
    .filter((secret) => secret.length >= MIN_SCRUBBED_LENGTH)
    .reduce((out, secret) => out.split(secret).join('[redacted]'), text);
}

export function registerDoctor(program: Command, deps: DoctorDeps = {}): void {
  program
    .command('doctor')
    .description('Check the configuration, the mapping, the database, the Service API key and the CRM fields')
    .option('--fix', 'HubSpot: create the missing custom properties; Salesforce: say how to create them')
    .option('--json', 'print the checks as JSON')
    .action(async (opts: DoctorOptions) => {
      const io = { out: (text: string) => console.log(text) };
      process.exitCode = await runDoctorFromEnv(process.env, io, opts, deps);
    });
}
