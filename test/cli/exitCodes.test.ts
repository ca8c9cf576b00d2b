/**
 * Exit codes an admin (and the systemd unit, RestartPreventExitStatus=2) relies on: 2 for what is
 * the admin's to fix, a mistaken argument included (issue 23, items 6 and 10).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { configDirWith, crmSync, removeConfigDirs } from './helpers.js';

afterAll(() => removeConfigDirs());

const settings = {
  SERVICE_API_BASE_URL: 'http://127.0.0.1:9',
  SERVICE_API_KEY: 'k',
  SERVICE_WEBHOOK_SECRET: 's',
  HUBSPOT_ACCESS_TOKEN: 't',
};

describe('exit codes', () => {
  it('start with a typo in the mapping file exits 2, naming the file and line', async () => {
    const dir = configDirWith('hubspot', 'writeback:\n  activty: {}\n');
    const { code, stderr } = await crmSync(['start'], { ...settings, CONFIG_DIR: dir });
    expect(stderr).toMatch(/^Invalid mapping:\n {2}.*hubspot\.yaml:\d+:\d+: /);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(code).toBe(2);
  });

  it('match with something other than an email exits 2 before any request', async () => {
    const { code, stderr } = await crmSync(['match', 'not-an-email'], settings);
    expect(stderr.trim()).toBe(
      `crm-sync: expected a participant's email address such as jane@acme.example, got "not-an-email"`,
    );
    expect(code).toBe(2);
  });

  it('replay --call with --failed is refused as contradictory, exit 2', async () => {
    const { code, stderr } = await crmSync(['replay', '--call', 'call_1', '--failed'], settings);
    expect(stderr.trim()).toBe(
      'crm-sync: a call id replays that one call: give it alone, or failed, a code or a time window without it',
    );
    expect(code).toBe(2);
  });
});
