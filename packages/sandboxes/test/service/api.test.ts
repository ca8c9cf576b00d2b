import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServiceSandbox, type CallJson, type ServiceSandbox } from '../../src/service/index.js';
import { admin, api, ROOMY_LIMITS } from './helpers.js';

interface Page {
  data: CallJson[];
  next_cursor: string | null;
  has_more: boolean;
}

let sandbox: ServiceSandbox;

beforeAll(async () => {
  sandbox = await startServiceSandbox({ limits: ROOMY_LIMITS, readOnlyApiKey: 'reader-key', seed: 3 });
});
afterAll(() => sandbox.close());

async function listAll(query: string): Promise<{ ids: string[]; pages: Page[] }> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const res = await api(
      sandbox,
      `/v1/calls?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(res.status).toBe(200);
    const page = (await res.json()) as Page;
    pages.push(page);
    cursor = page.has_more ? page.next_cursor : null;
  } while (cursor);
  return { ids: pages.flatMap((p) => p.data.map((c) => c.id)), pages };
}

function firstCall(status: string): CallJson {
  const call = sandbox.state
    .calls()
    .map((c) => sandbox.state.callJson(c.id) as CallJson)
    .find((c) => c.status === status);
  if (!call) throw new Error(`no seeded ${status} call`);
  return call;
}

describe('GET /v1/calls', () => {
  it('pages through every call in created_at, id order with the default and custom limits', async () => {
    const { ids, pages } = await listAll('limit=7');
    expect(pages.map((p) => p.data.length)).toEqual([7, 7, 7, 4]);
    expect(pages.map((p) => p.has_more)).toEqual([true, true, true, false]);
    expect(ids).toEqual(sandbox.state.calls().map((c) => c.id));
    expect(new Set(ids).size).toBe(25);
    const created = pages.flatMap((p) => p.data.map((c) => c.created_at));
    expect([...created].sort()).toEqual(created);
    const all = (await (await api(sandbox, '/v1/calls')).json()) as Page;
    expect(all.data).toHaveLength(25);
    expect(all.has_more).toBe(false);
  });

  it('keeps the cursor on the last page, so a later call picks up calls created since', async () => {
    const { pages } = await listAll('limit=10');
    const last = pages[pages.length - 1] as Page;
    expect(last.has_more).toBe(false);
    expect(last.next_cursor).toEqual(expect.any(String));
    const cursor = encodeURIComponent(last.next_cursor as string);

    const empty = (await (await api(sandbox, `/v1/calls?cursor=${cursor}`)).json()) as Page;
    expect(empty).toEqual({ data: [], next_cursor: last.next_cursor, has_more: false });

    const created = (await admin(sandbox, '/calls', { id: 'call_resume_check' })) as CallJson;
    const resumed = (await (await api(sandbox, `/v1/calls?cursor=${cursor}`)).json()) as Page;
    expect(resumed.data.map((c) => c.id)).toEqual([created.id]);
    expect(resumed.has_more).toBe(false);
    expect(resumed.next_cursor).not.toBe(last.next_cursor);
  });

  it('returns a null cursor only when nothing came back and none was sent', async () => {
    const page = (await (await api(sandbox, '/v1/calls?created_after=2999-01-01T00:00:00Z')).json()) as Page;
    expect(page).toEqual({ data: [], next_cursor: null, has_more: false });
  });

  it('filters by status and treats created_after as exclusive', async () => {
    const completed = (await (await api(sandbox, '/v1/calls?status=analyzed&limit=100')).json()) as Page;
    expect(completed.data.length).toBeGreaterThan(10);
    expect(completed.data.every((c) => c.status === 'analyzed' && c.scoring)).toBe(true);
    const [first, second] = sandbox.state.calls();
    const after = new Date(first?.createdAtMs as number).toISOString();
    const page = (await (await api(sandbox, `/v1/calls?created_after=${after}&limit=1`)).json()) as Page;
    expect(page.data[0]?.id).toBe(second?.id);
    const before = new Date(second?.createdAtMs as number).toISOString();
    const older = (await (await api(sandbox, `/v1/calls?created_before=${before}`)).json()) as Page;
    expect(older.data.map((c) => c.id)).toEqual([first?.id]);
  });

  it.each([
    ['limit=0', 'invalid_limit'],
    ['limit=101', 'invalid_limit'],
    ['limit=ten', 'invalid_limit'],
    ['cursor=not-a-cursor!', 'invalid_cursor'],
    ['cursor=bm90IGpzb24', 'invalid_cursor'],
    ['created_after=yesterday', 'invalid_parameter'],
  ])('answers 400 to %s', async (query, code) => {
    const res = await api(sandbox, `/v1/calls?${query}`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code, message: expect.any(String) } });
  });
});

describe('call resources', () => {
  it('returns the call object with links, and 404 call_not_found for an unknown id', async () => {
    const call = firstCall('analyzed');
    const res = await api(sandbox, `/v1/calls/${call.id}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as CallJson;
    expect(body).toMatchObject({
      id: call.id,
      status: 'analyzed',
      participant: { email: expect.any(String) },
    });
    expect(body.links.analysis).toBe(`/v1/calls/${call.id}/analysis`);
    for (const value of Object.values(body.scoring ?? {})) expect(value).toBeGreaterThanOrEqual(0);

    for (const path of ['', '/transcript', '/analysis', '/recording']) {
      const missing = await api(sandbox, `/v1/calls/call_nope${path}`);
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('call_not_found');
    }
  });

  it('serves transcripts and analyses, and 409 analysis_not_ready before analysis', async () => {
    const call = firstCall('analyzed');
    const transcript = (await (await api(sandbox, `/v1/calls/${call.id}/transcript`)).json()) as {
      segments: { speaker: string; start_seconds: number; end_seconds: number; text: string }[];
    };
    expect(transcript).toMatchObject({ call_id: call.id, language: 'en' });
    expect(transcript.segments.length).toBeGreaterThan(3);
    const analysis = (await (await api(sandbox, `/v1/calls/${call.id}/analysis`)).json()) as Record<
      string,
      unknown
    >;
    expect(analysis).toMatchObject({
      call_id: call.id,
      scoring: call.scoring,
      methodology: call.methodology,
    });
    expect(analysis.next_steps).toEqual(expect.arrayContaining([expect.any(String)]));

    const pending = await api(sandbox, `/v1/calls/${firstCall('processing').id}/analysis`);
    expect(pending.status).toBe(409);
    expect(((await pending.json()) as { error: { code: string } }).error.code).toBe('analysis_not_ready');
  });

  it('admin sets any status, unknown ones included, with the content a finished status implies', async () => {
    const created = (await admin(sandbox, '/calls', {})) as CallJson;
    expect(
      ((await admin(sandbox, `/calls/${created.id}/status`, { status: 'cancelled' })) as CallJson).status,
    ).toBe('cancelled');
    expect(((await (await api(sandbox, `/v1/calls/${created.id}`)).json()) as CallJson).status).toBe(
      'cancelled',
    );
    await admin(sandbox, `/calls/${created.id}/status`, { status: 'analyzed' });
    expect((await api(sandbox, `/v1/calls/${created.id}/analysis`)).status).toBe(200);
    await expect(admin(sandbox, `/calls/${created.id}/status`, { status: 'Bad Status' })).rejects.toThrow(
      /400/,
    );
  });

  it('admin creates a call already ended with complete: true, analysed at once without a delay', async () => {
    const ended = (await admin(sandbox, '/calls', { complete: true })) as CallJson;
    expect(ended.status).not.toBe('in_progress');
    await expect(admin(sandbox, '/calls', { complete: 'yes' })).rejects.toThrow(/400/);
    const instant = await startServiceSandbox({ limits: ROOMY_LIMITS, seedCalls: 0, analysisDelayMs: 0 });
    try {
      const call = (await admin(instant, '/calls', { complete: true })) as CallJson;
      expect(call.status).toBe('analyzed');
      expect((await api(instant, `/v1/calls/${call.id}/analysis`)).status).toBe(200);
    } finally {
      await instant.close();
    }
  });

  it('streams the recording as audio/mpeg in chunks', async () => {
    const call = firstCall('analyzed');
    const res = await api(sandbox, `/v1/calls/${call.id}/recording`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    const length = Number(res.headers.get('content-length'));
    expect(length).toBeGreaterThan(200 * 1024);
    let total = 0;
    let chunks = 0;
    let head = Buffer.alloc(0);
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      if (head.length < 3) head = Buffer.concat([head, Buffer.from(chunk)]);
      total += chunk.length;
      chunks++;
    }
    expect(total).toBe(length);
    expect(chunks).toBeGreaterThan(1);
    expect(head.subarray(0, 3).toString('latin1')).toBe('ID3');
  });

  it('can redirect the recording to a signed URL that needs no bearer', async () => {
    const call = firstCall('analyzed');
    await admin(sandbox, '/config', { recordingRedirect: true });
    try {
      const res = await api(sandbox, `/v1/calls/${call.id}/recording`, { redirect: 'manual' });
      expect(res.status).toBe(302);
      const location = res.headers.get('location') as string;
      expect(location).toMatch(/^\/_signed\/recording\//);
      const signed = await fetch(`${sandbox.url}${location}`);
      expect(signed.status).toBe(200);
      expect(signed.headers.get('content-type')).toBe('audio/mpeg');
      expect((await signed.arrayBuffer()).byteLength).toBe(Number(signed.headers.get('content-length')));
      // Flip the signature's first hex digit (the key is random per sandbox, so never assume it).
      const flipped = location.replace(
        /signature=(.)/,
        (_m, c: string) => `signature=${c === '0' ? '1' : '0'}`,
      );
      const tampered = await fetch(`${sandbox.url}${flipped}`);
      expect(tampered.status).toBe(403);
      await tampered.arrayBuffer();
    } finally {
      await admin(sandbox, '/config', { recordingRedirect: false });
    }
  });

  it('answers metrics, grouped on request, and 400 for a bad group_by', async () => {
    const res = await api(sandbox, '/v1/metrics?from=2000-01-01T00:00:00Z&group_by=platform');
    expect(res.status).toBe(200);
    const metrics = (await res.json()) as {
      totals: { calls: number };
      groups: { key: string; calls: number }[];
    };
    expect(metrics.totals.calls).toBe(sandbox.state.calls().length);
    expect(metrics.groups.reduce((n, g) => n + g.calls, 0)).toBe(metrics.totals.calls);
    expect((await api(sandbox, '/v1/metrics?group_by=planet')).status).toBe(400);
  });
});

describe('POST endpoints', () => {
  const context = {
    source: 'hubspot',
    contact: { email: 'jane.doe@acme.example' },
    deals: [{ id: 'd1', stage: 'won' }],
  };

  it('accepts a context with 202 and keeps every push in order', async () => {
    const call = firstCall('analyzed');
    for (const n of [1, 2]) {
      const res = await api(sandbox, `/v1/calls/${call.id}/context`, {
        method: 'POST',
        body: JSON.stringify({ ...context, custom: { n } }),
      });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ status: 'accepted' });
    }
    const stored = (await admin(sandbox, `/contexts/${call.id}`)) as { custom: { n: number } }[];
    expect(stored.map((c) => c.custom.n)).toEqual([1, 2]);
  });

  it('refuses contexts over 64 KiB (413), broken JSON (400), bad fields (422) and unknown calls (404)', async () => {
    const id = firstCall('analyzed').id;
    const post = (path: string, body: string) => api(sandbox, path, { method: 'POST', body });
    const big = JSON.stringify({ ...context, custom: { pad: 'x'.repeat(64 * 1024) } });
    const tooBig = await post(`/v1/calls/${id}/context`, big);
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
    const justFits = JSON.stringify({ custom: { pad: 'x'.repeat(64 * 1024 - 21) } });
    expect(Buffer.byteLength(justFits)).toBe(64 * 1024);
    expect((await post(`/v1/calls/${id}/context`, justFits)).status).toBe(202);
    expect((await post(`/v1/calls/${id}/context`, `${justFits} `)).status).toBe(413);
    expect((await post(`/v1/calls/${id}/context`, '{"source":')).status).toBe(400);
    expect((await post(`/v1/calls/${id}/context`, '{"source":"pipedrive"}')).status).toBe(422);
    expect((await post(`/v1/calls/call_nope/context`, JSON.stringify(context))).status).toBe(404);
  });

  it('generates new follow-up drafts on every POST', async () => {
    const call = firstCall('analyzed');
    const before = sandbox.state.followups(call.id).length;
    const ask = () =>
      api(sandbox, `/v1/calls/${call.id}/followups`, {
        method: 'POST',
        body: JSON.stringify({ tone: 'warm', recipients: ['Jane.Doe@Acme.example'] }),
      });
    const first = await ask();
    expect(first.status).toBe(201);
    const a = ((await first.json()) as { data: { id: string; to: string[]; subject: string }[] }).data;
    const b = ((await (await ask()).json()) as { data: { id: string }[] }).data;
    expect(a.length).toBeGreaterThan(0);
    expect(a[0]?.to).toEqual(['Jane.Doe@Acme.example']);
    expect(a.map((d) => d.id)).not.toEqual(expect.arrayContaining(b.map((d) => d.id)));
    const stored = (await admin(sandbox, `/followups/${call.id}`)) as unknown[];
    expect(stored).toHaveLength(before + a.length + b.length);
    const bad = await api(sandbox, `/v1/calls/${call.id}/followups`, {
      method: 'POST',
      body: '{"recipients":"x"}',
    });
    expect(bad.status).toBe(422);
  });
});

describe('auth', () => {
  it('answers 401 unauthorized to a missing or wrong key, without echoing it', async () => {
    const missing = await fetch(`${sandbox.url}/v1/calls`);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    const wrong = await api(sandbox, '/v1/calls', {}, 'sandbox-key-but-wrong');
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain('sandbox-key');
  });

  it('lets the read-only key read but answers its POSTs with 403', async () => {
    const id = firstCall('analyzed').id;
    expect((await api(sandbox, `/v1/calls/${id}`, {}, 'reader-key')).status).toBe(200);
    const res = await api(sandbox, `/v1/calls/${id}/context`, { method: 'POST', body: '{}' }, 'reader-key');
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    expect(sandbox.state.contexts(id).every((c) => JSON.stringify(c.body) !== '{}')).toBe(true);
  });
});
