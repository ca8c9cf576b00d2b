/**
 * Runs last: every log line and CLI output the suite captured (each scenario's directory) is
 * searched for the run's secrets: the Service API key, the webhook secret, the CRM tokens, the
 * admin token and the database password. It adds output of its own first, from the places a secret is most likely
 * to slip out: a debug-level worker start (which logs its configuration), `doctor` and `status`,
 * and the CLI failing on a wrong key and an unreachable database whose URL carries the password.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { startSalesforceSandbox } from '@crm-sync/sandboxes/salesforce';
import { startChaosWorker, runChaosCli } from '../lib/processes.js';
import { startStack } from '../lib/stack.js';
import { Verdict, type Scenario, type ScenarioContext } from '../scenario.js';

export const secretsScenario: Scenario = {
  name: 'secrets',
  description:
    'every captured log line and CLI output of the run searched for the API key, webhook secret, CRM token, database password',
  budgetMs: 90_000,
  run: runSecrets,
};

/** Every file under `dir`, except database directories (they hold data, not output). */
function outputFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (!statSync(full).isDirectory()) return [full];
    return name === 'data' ? [] : outputFiles(full);
  });
}

/** Makes the output most likely to carry a secret if anything leaks. */
async function produceOutput(ctx: ScenarioContext): Promise<void> {
  const stack = await startStack(ctx, { database: 'postgres', plan: 'team' });
  try {
    const adminToken = `chaosAdmin${randomBytes(12).toString('hex')}`;
    ctx.secrets.add('ADMIN_TOKEN', adminToken);
    const env = await stack.env({ LOG_LEVEL: 'debug', ADMIN_TOKEN: adminToken });
    const worker = await startChaosWorker(env, { dir: ctx.dir, label: 'worker' });
    const cli = { dir: ctx.dir, label: 'cli' };
    await runChaosCli(['status'], env, cli);
    await runChaosCli(['status', '--json'], env, cli);
    await runChaosCli(['doctor'], env, cli);
    await worker.stop();
    // Failures echo what they were given more often than successes do.
    const wrongKey = `${ctx.secrets.suite.serviceApiKey}Wrong`;
    ctx.secrets.add('wrong Service API key', wrongKey);
    await runChaosCli(['doctor'], { ...env, SERVICE_API_KEY: wrongKey }, cli);
    const unreachable = new URL(stack.databaseUrl!);
    unreachable.port = '9';
    await runChaosCli(['status'], { ...env, DATABASE_URL: unreachable.toString() }, cli);
    await runChaosCli(['doctor'], { ...env, DATABASE_URL: unreachable.toString() }, cli);
    // The Salesforce side: its sandbox issues the token.
    const sf = await startSalesforceSandbox();
    try {
      ctx.secrets.add('Salesforce access token', sf.accessToken);
      const sfEnv = {
        ...env,
        CRM: 'salesforce',
        HUBSPOT_ACCESS_TOKEN: undefined,
        SALESFORCE_INSTANCE_URL: sf.url,
        SALESFORCE_LOGIN_URL: sf.url,
        SALESFORCE_ACCESS_TOKEN: sf.accessToken,
      };
      await runChaosCli(['doctor'], sfEnv, cli);
      await runChaosCli(['doctor'], { ...sfEnv, SALESFORCE_ACCESS_TOKEN: `${sf.accessToken}x` }, cli);
    } finally {
      await sf.close();
    }
  } finally {
    await stack.close();
  }
}

async function runSecrets(ctx: ScenarioContext) {
  const verdict = new Verdict();
  await produceOutput(ctx);
  const secrets = ctx.secrets.entries();
  const hits: string[] = [];
  let lines = 0;
  const files = outputFiles(ctx.runDir);
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    lines += text.split('\n').length;
    for (const { name, value } of secrets) {
      if (!text.includes(value)) continue;
      const line = text.slice(0, text.indexOf(value)).split('\n').length;
      hits.push(`${name} in ${path.relative(ctx.runDir, file)}:${line}`);
    }
  }
  verdict.figure('files', files.length);
  verdict.figure('lines', lines);
  verdict.figure('secrets', secrets.length);
  verdict.figure('hits', hits.length);
  verdict.check(hits.length === 0, `secrets in the output: ${hits.slice(0, 10).join('; ')}`);
  return verdict.result();
}
