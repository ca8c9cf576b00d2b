/**
 * The operator console in a real browser (Debian's Chromium driven by playwright-core) against the
 * worker as its own process, with the Service and HubSpot sandboxes: sign in with the admin token,
 * compare the overview with `crm-sync status --json`, open a failed call, replay it, see it written
 * back. With UPDATE_SCREENSHOTS=1 it also refreshes the README's screenshots (docs/console-*.png).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubSpotSandbox, type HubSpotSandbox } from '@crm-sync/sandboxes/hubspot';
import { startServiceSandbox, type ServiceSandbox } from '@crm-sync/sandboxes/service';
import type { StatusSnapshot } from '../../src/ops/status.js';
import {
  completeCall,
  createCall,
  freePort,
  REPO_ROOT,
  removeTempDirs,
  runCli,
  startWorkerProcess,
  stopWorker,
  syncState,
  tempDataDir,
  waitFor,
  waitWrittenBack,
  workerEnv,
  type WorkerProcess,
} from './harness.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// CI installs Chromium (.ci/run) and must run these; elsewhere they need it installed.
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs it`);

const TOKEN = 'console-test-token-6c0d9a1e5b';
// A CLI run and a page refresh each take seconds on a busy machine; these are deadlines, not sleeps.
const STEP_TIMEOUT_MS = 120_000;
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS ? path.join(REPO_ROOT, 'docs') : tmpdir();
const JANE = { name: 'Jane Doe', email: 'jane.doe@acme.example', company: 'Acme Corp' };
const DANA = { name: 'Dana Deals', email: 'dana@umbrella.example', company: 'Umbrella Inc' };

let svc: ServiceSandbox;
let hs: HubSpotSandbox;
let worker: WorkerProcess;
let context: BrowserContext;
let page: Page;
let profileDir: string;
let failedCall: string;

describe.runIf(hasChromium)('operator console in a browser', () => {
  beforeAll(async () => {
    const port = await freePort();
    [svc, hs] = await Promise.all([
      startServiceSandbox({
        plan: 'enterprise',
        seedCalls: 0,
        analysisDelayMs: 50,
        webhookUrl: `http://127.0.0.1:${port}/webhooks`,
      }),
      startHubSpotSandbox(),
    ]);
    worker = await startWorkerProcess(
      workerEnv(
        svc,
        { kind: 'hubspot', sandbox: hs },
        // Every interface, so the test can also knock from a non-loopback address.
        { PORT: String(port), DATA_DIR: tempDataDir(), ADMIN_TOKEN: TOKEN, HOST: '0.0.0.0' },
      ),
      90_000,
    );
    profileDir = mkdtempSync(path.join(tmpdir(), 'crm-sync-chromium-'));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 860 },
      // Without the background-networking flags Chromium's own connections are refused here.
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    context.setDefaultTimeout(60_000);
    page = context.pages()[0] ?? (await context.newPage());

    // One call written back, one failed by the CRM refusing its activity (a 400 on the upsert).
    const ok = await createCall(svc, JANE);
    await completeCall(svc, ok);
    await waitWrittenBack(worker, [ok], 60_000);
    hs.state.faults.add({ status: 400, count: 1, match: '/calls/batch/upsert' });
    failedCall = await createCall(svc, DANA);
    await completeCall(svc, failedCall);
    await waitFor('the call to fail', async () => (await syncState(worker, failedCall)) === 'failed', {
      timeoutMs: 60_000,
    });
  }, 240_000);

  afterAll(async () => {
    await context?.close();
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
    if (worker) await stopWorker(worker).catch(() => undefined);
    await Promise.all([svc?.close(), hs?.close()]);
    removeTempDirs();
  });

  it(
    'signs in with the token and shows the same numbers as `crm-sync status --json`',
    async () => {
      await page.goto(`${worker.url}/console`);
      expect(new URL(page.url()).pathname).toBe('/console/login');
      await page.fill('input[name=token]', 'not-the-token-000000');
      await page.click('button[type=submit]');
      expect(await page.textContent('.error')).toContain('not right');
      await page.fill('input[name=token]', TOKEN);
      await page.click('button[type=submit]');
      expect(new URL(page.url()).pathname).toBe('/console');

      const cli = await runCli(['status', '--json'], worker.env);
      expect(cli.code, cli.stderr).toBe(0);
      const status = JSON.parse(cli.stdout) as StatusSnapshot;
      const shown = await page.$$eval('[data-count^="all:"]', (cells) =>
        Object.fromEntries(cells.map((c) => [c.getAttribute('data-count')!.slice(4), c.textContent!.trim()])),
      );
      const expected = Object.fromEntries(
        Object.entries(status.calls).map(([k, v]) => [k, v.toLocaleString('en-US')]),
      );
      expect(shown).toEqual(expected);
      expect(status.calls).toMatchObject({ written_back: 1, failed: 1 });
      expect(await page.textContent('[data-budget="used"]')).toContain(
        status.budget.usedToday.toLocaleString('en-US'),
      );
      for (const [priority, n] of Object.entries(status.jobs.queuedByPriority)) {
        expect(await page.textContent(`[data-queue="${priority}"]`)).toBe(String(n));
      }
      // The cursor in words (the Service's token stays in a details box). The calls came by
      // webhook, so the poll may not have listed one yet.
      expect(await page.textContent('[data-cursor="summary"]')).toMatch(
        /^(calls up to \d{4}-\d\d-\d\d \d\d:\d\d UTC|no new call listed by polling yet), polled \d+ (s|min) ago$/,
      );
      await page.screenshot({ path: path.join(SCREENSHOTS, 'console-overview.png'), fullPage: true });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'shows the failure with its message and a replay button for one call, and no page asks for a missing file',
    async () => {
      const missing: string[] = [];
      const onResponse = (res: { status(): number; url(): string }) => {
        if (res.status() === 404) missing.push(res.url());
      };
      page.on('response', onResponse);
      try {
        await page.goto(`${worker.url}/console/failures`);
        const card = await page.textContent('section.failure');
        expect(card).toContain('Latest message:');
        expect(await page.textContent('section.failure button[type=submit]')).toBe('Replay this call');
        await page.screenshot({ path: path.join(SCREENSHOTS, 'console-failures.png'), fullPage: true });
        await page.goto(`${worker.url}/console`);
      } finally {
        page.off('response', onResponse);
      }
      // Browsers ask for /favicon.ico on every page.
      expect(missing).toEqual([]);
      expect((await fetch(`${worker.url}/favicon.ico`)).status).toBe(200);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'lists recent calls on the Calls page before any search, newest first',
    async () => {
      await page.goto(`${worker.url}/console/calls`);
      const rows = await page.$$eval('#recent-calls table.list tbody tr', (trs) =>
        trs.map((tr) => tr.textContent!),
      );
      // The failed call was updated last; the call written back before it.
      expect(rows).toHaveLength(2);
      expect(rows[0]).toContain(failedCall);
      expect(rows[0]).toContain(DANA.company);
      expect(rows[0]).toContain('CRM_REJECTED');
      expect(rows[1]).toContain(JANE.email);
      expect(rows[1]).toContain('written_back');
      expect(await page.getAttribute('#recent-calls td[data-updated] time', 'title')).toMatch(
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
      );
      await page.screenshot({ path: path.join(SCREENSHOTS, 'console-calls.png'), fullPage: true });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'opens the failed call from its error group, replays it, and sees it written back',
    async () => {
      await page.click('a[href="/console/failures"] >> nth=0');
      const group = page.locator('section[data-code="CRM_REJECTED"]');
      expect(await group.locator('.hint').textContent()).toContain('replay');
      await group.locator(`a:has-text("${failedCall}")`).click();
      expect(await page.textContent('#call-state')).toBe('failed');
      expect(await page.textContent('.error')).toContain('CRM_REJECTED');
      // The failure is one line of the timeline (the move to failed), not that and a failed try.
      const failedLines = await page.$$eval('#timeline tbody tr', (rows) =>
        rows.filter((r) => r.textContent!.includes('CRM_REJECTED')).map((r) => r.textContent!),
      );
      expect(failedLines).toHaveLength(1);
      expect(failedLines[0]).toContain('→ failed');

      await page.click('button:has-text("Replay this call")');
      expect(await page.textContent('.notice')).toContain('Queued 1 call');
      // No reload: the page refreshes its own content while open (console.js, every 15 s).
      await page.waitForFunction(
        () => document.getElementById('call-state')?.textContent === 'written_back',
        undefined,
        { timeout: 60_000, polling: 250 },
      );
      expect(await page.textContent('#refreshed')).toMatch(/updated \d\d:\d\d:\d\d UTC/);
      const timeline = await page.textContent('#timeline');
      expect(timeline).toContain('replay requested by an operator');
      const contactLink = await page.getAttribute('[data-record="contact"] a', 'href');
      expect(contactLink).toMatch(/\/contacts\/0\/record\/0-1\//);
      await page.screenshot({ path: path.join(SCREENSHOTS, 'console-call.png'), fullPage: true });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'finds the call by participant email and company',
    async () => {
      for (const q of [DANA.email, 'umbrella']) {
        await page.goto(`${worker.url}/console/calls?q=${encodeURIComponent(q)}`);
        expect(await page.textContent('table.list')).toContain(failedCall);
      }
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'reveals nothing without the token, from loopback or another address, and keeps /metrics free of personal data',
    async () => {
      const bases = [worker.url, ...nonLoopbackAddresses().map((a) => worker.url.replace('127.0.0.1', a))];
      expect(bases.length, 'a non-loopback address to knock from').toBeGreaterThan(1);
      for (const base of bases) {
        for (const p of [
          '/status',
          `/admin/calls/${failedCall}`,
          '/console',
          `/console/calls/${failedCall}`,
        ]) {
          const res = await fetch(`${base}${p}`, { redirect: 'manual' });
          const body = await res.text();
          expect([401, 303], `${base}${p}`).toContain(res.status);
          expect(body, `${base}${p}`).not.toContain(DANA.email);
          expect(body).not.toContain(failedCall);
        }
        const replay = await fetch(`${base}/admin/replay`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ failed: true }),
        });
        expect(replay.status).toBe(401);
      }
      const metrics = await (await fetch(`${worker.url}/metrics`)).text();
      expect(metrics).not.toContain(DANA.email);
      expect(metrics).not.toContain(failedCall);
    },
    STEP_TIMEOUT_MS,
  );
});

function nonLoopbackAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((a) => a && a.family === 'IPv4' && !a.internal)
    .map((a) => a!.address);
}
