/**
 * The files an admin installs from: crm-sync.env.example lists every variable with its real
 * default, docker-compose.yml runs the worker on PostgreSQL with health checks and a named
 * volume, the systemd unit runs `crm-sync start`, and the README points at all of them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../src/config/config.js';
import { rawConfigSchema } from '../../src/config/schema.js';
import { loadMappings, requiredFields } from '../../src/mapping/index.js';
import { PROPERTY_GROUP } from '../../src/crm/hubspot/setup.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/service/events.js';

const ROOT = path.join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Schema default of each variable, as the text an env file would hold ('' when none). */
function defaults(): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, field] of Object.entries(rawConfigSchema.shape)) {
    const value = field.safeParse(undefined).data;
    out.set(key, value === undefined ? '' : String(value));
  }
  return out;
}

describe('crm-sync.env.example', () => {
  const lines = read('crm-sync.env.example')
    .split('\n')
    .map((line) => /^(#\s*)?([A-Z][A-Z0-9_]+)=(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map(([, comment, key, value]) => ({ commented: Boolean(comment), key: key!, value: value! }));

  it('lists every variable once, with its default', () => {
    const expected = defaults();
    expect(lines.map((l) => l.key).sort()).toEqual([...expected.keys()].sort());
    for (const line of lines) expect(line.value, line.key).toBe(expected.get(line.key));
  });

  it('leaves uncommented only what must be filled in, and then parses', () => {
    const required = lines.filter((l) => !l.commented).map((l) => l.key);
    expect(required).toEqual([
      'SERVICE_API_BASE_URL',
      'SERVICE_API_KEY',
      'SERVICE_WEBHOOK_SECRET',
      'HUBSPOT_ACCESS_TOKEN',
    ]);
    const asIs = Object.fromEntries(lines.filter((l) => !l.commented).map((l) => [l.key, l.value]));
    expect(() =>
      parseConfig({ ...asIs, CONFIG_DIR: '/nonexistent' }, { require: { service: true, crm: true } }),
    ).toThrow(/4 problems/);
    const filled = {
      SERVICE_API_BASE_URL: 'https://api.example.com',
      SERVICE_API_KEY: 'k',
      SERVICE_WEBHOOK_SECRET: 's',
      HUBSPOT_ACCESS_TOKEN: 't',
      CONFIG_DIR: '/nonexistent',
    };
    expect(parseConfig(filled, { require: { service: true, crm: true } }).crm).toBe('hubspot');
  });
});

describe('docker-compose.yml', () => {
  const compose = parseYaml(read('docker-compose.yml')) as {
    services: Record<string, Record<string, unknown>>;
    volumes: Record<string, unknown>;
  };

  it('runs the worker on PostgreSQL, once the database is healthy, with state in a named volume', () => {
    const { db, worker } = compose.services;
    expect(db?.image).toMatch(/^postgres:/);
    expect(db?.healthcheck).toBeDefined();
    expect(worker?.healthcheck).toBeDefined();
    expect(worker?.build).toBe('.');
    expect(worker?.env_file).toBe('crm-sync.env');
    expect(worker?.depends_on).toEqual({ db: { condition: 'service_healthy' } });
    expect((worker?.environment as Record<string, string>).DATABASE_URL).toMatch(
      /^postgres:\/\/.*@db:5432\//,
    );
    const [volume] = (db?.volumes as string[])[0]!.split(':');
    expect(Object.keys(compose.volumes)).toContain(volume);
  });
});

describe('systemd unit', () => {
  const unit = read('deploy/systemd/crm-sync.service');

  it('runs crm-sync start with the env file, and does not restart-loop on a configuration error', () => {
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/node \/opt\/crm-sync\/bin\/crm-sync\.js start$/m);
    expect(unit).toMatch(/^EnvironmentFile=\/etc\/crm-sync\/crm-sync\.env$/m);
    // src/cli/main.ts exits 2 on a ConfigError, a SetupError and a MappingError (test/cli/exitCodes.test.ts runs them).
    expect(read('src/cli/main.ts')).toMatch(
      /err instanceof ConfigError \|\| err instanceof SetupError \|\| err instanceof MappingError\) \{\s+console\.error\(err\.message\);\s+process\.exit\(2\)/,
    );
    expect(unit).toMatch(/^RestartPreventExitStatus=2$/m);
    expect(unit).toMatch(/^User=crm-sync$/m);
  });

  it('asks for the install the guide does (npm ci --omit=dev fails at postinstall)', () => {
    expect(unit).not.toContain('--omit=dev');
    expect(unit).toContain('`npm ci && npm run build`');
    expect(read('docs/install.md')).toContain('sudo npm ci && sudo npm run build');
    expect(read('package.json')).toMatch(/"postinstall": "node scripts\/prisma-generate\.mjs"/);
  });
});

describe('README', () => {
  it('points at the install guide and every deployment file', () => {
    const readme = read('README.md');
    for (const file of [
      'docs/install.md',
      'docker-compose.yml',
      'crm-sync.env.example',
      'deploy/systemd/crm-sync.service',
      'deploy/prometheus/alerts.yml',
      'deploy/grafana/crm-sync.json',
    ]) {
      expect(readme).toContain(`](${file})`);
    }
  });
});

describe('docs/install.md', () => {
  const guide = read('docs/install.md');

  it('names the HubSpot property group doctor --fix creates', () => {
    expect(guide).toContain(`in the property group \`${PROPERTY_GROUP.name}\``);
    expect(guide).not.toMatch(/in a "crm-sync" property group/);
  });

  it('keeps the files it puts secrets in out of git', () => {
    const ignored = read('.gitignore').split('\n');
    expect(read('README.md')).toContain('cp config/crm-sync.example.yaml config/crm-sync.yaml');
    expect(guide).toContain('cp crm-sync.env.example crm-sync.env');
    expect(ignored).toContain('config/crm-sync.yaml');
    expect(ignored).toContain('crm-sync.env');
  });

  it('lists every Salesforce field the default mapping needs, with its type and External ID flag', () => {
    const rows = new Map(
      [
        ...guide.matchAll(
          /^\| (Task|EmailMessage|Opportunity) \| [^|]+ \| `(\w+)` \| ([^|]+) \| (\*\*yes\*\*|no) \|/gm,
        ),
      ].map(([, object, name, type, externalId]) => [
        `${object}.${name}`,
        { type: type!.trim(), externalId: externalId !== 'no' },
      ]),
    );
    const mapping = loadMappings(path.join(ROOT, 'config'), 'salesforce');
    const required = requiredFields(mapping);
    expect(required.length).toBeGreaterThan(5);
    for (const field of required) {
      const row = rows.get(`${field.object}.${field.name}`);
      expect(row, `${field.object}.${field.name}`).toBeDefined();
      const types = { number: 'Number(16, 2)', date: 'Date', datetime: 'Date/Time' } as Record<
        string,
        string
      >;
      expect(row?.type).toBe(types[field.type] ?? 'Text(255)');
      expect(row?.externalId, `${field.object}.${field.name} External ID`).toBe(field.unique === true);
    }
  });

  it('starts HubSpot from a Service Key and asks for no legacy private app (issue 21)', () => {
    const hubspot = guide.slice(guide.indexOf('## 1. HubSpot'), guide.indexOf('## 2.'));
    expect(hubspot).toContain('## 1. HubSpot: a Service Key');
    // No menu path to the private-app screen, and no step (numbered line) about a private app.
    expect(guide).not.toMatch(/Private Apps\s*>/i);
    const steps = hubspot.split('\n').filter((l) => /^\s*\d+\.\s/.test(l));
    expect(steps.length).toBeGreaterThan(4);
    for (const step of steps) expect(step).not.toMatch(/private[- ]app/i);
    // Every mention of a private app is of an existing, legacy one.
    for (const line of hubspot.split('\n').filter((l) => /private[- ]app/i.test(l)))
      expect(line).toMatch(/legacy/i);
    // The "which credential" table: new install, existing legacy private app, OAuth.
    const rows = [...hubspot.matchAll(/^\| ([^|]+) \| ([^|]+) \| [^|]+ \|$/gm)].map((m) => [
      m[1]!.trim(),
      m[2]!.trim(),
    ]);
    expect(rows).toEqual(
      expect.arrayContaining([
        ['New install', 'A Service Key (1a)'],
        [expect.stringMatching(/^Existing legacy private app/), expect.stringMatching(/keeps working/)],
        [expect.stringMatching(/OAuth/), 'A project-based app with OAuth (1b)'],
      ]),
    );
    // Each way names the vendor page it follows.
    const ways = hubspot.split(/^### /m).slice(1, 4);
    expect(ways.map((w) => w.split('\n')[0])).toEqual([
      '1a. A Service Key (new installs)',
      '1b. A project-based app with OAuth (optional)',
      '1c. An existing legacy private app',
    ]);
    for (const way of ways) expect(way).toMatch(/HubSpot's "[^"]+"|changelog "[^"]+"/);
  });

  it('names every scope doctor probes for HubSpot in the scope table', () => {
    const table = new Set([...guide.matchAll(/^\| `(crm\.[a-z.]+)`/gm)].map((m) => m[1]));
    for (const scope of [
      'crm.objects.contacts.read',
      'crm.objects.companies.read',
      'crm.objects.deals.read',
      'crm.objects.owners.read',
      'crm.schemas.contacts.read',
    ])
      expect(table).toContain(scope);
  });

  it('names the webhook events the worker acts on, and only those', () => {
    const listed = [...guide.matchAll(/^\| `([a-z]+\.[a-z]+)` \|/gm)].map((m) => m[1]);
    expect(listed).toEqual(WEBHOOK_EVENT_TYPES.filter((t) => t !== 'transcript.ready'));
  });
});
