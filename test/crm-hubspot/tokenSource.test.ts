import { describe, expect, it } from 'vitest';
import { TokenSource, type RefreshFn } from '../../src/crm/hubspot/auth.js';
import { FakeClock } from '../../src/util/fakeClock.js';

const OAUTH = { clientId: 'cid', clientSecret: 'secret', refreshToken: 'refresh' };

/** A token endpoint stand-in that hands out numbered tokens living `expiresInSec`. */
function grants(expiresInSec: number): { refresh: RefreshFn; count: () => number } {
  let n = 0;
  return {
    refresh: async () => ({ accessToken: `token-${++n}`, expiresInSec }),
    count: () => n,
  };
}

describe('HubSpot OAuth token source', () => {
  it('renews a 30-minute token a minute before it expires, not before', async () => {
    const clock = new FakeClock();
    const endpoint = grants(1800);
    const tokens = new TokenSource(OAUTH, clock, endpoint.refresh);
    expect(await tokens.current()).toBe('token-1');
    await clock.advance(1800_000 - 60_001);
    expect(await tokens.current()).toBe('token-1');
    await clock.advance(2);
    expect(await tokens.current()).toBe('token-2');
  });

  // Found by the crm-storm chaos scenario: with tokens shorter-lived than the one-minute margin,
  // every request asked for a new token first (73 token grants in half a minute).
  it('keeps a short-lived token for most of its life instead of renewing it on every request', async () => {
    const clock = new FakeClock();
    const endpoint = grants(4);
    const tokens = new TokenSource(OAUTH, clock, endpoint.refresh);
    for (let i = 0; i < 10; i++) {
      await tokens.current();
      await clock.advance(300);
    }
    // 3 s of use: still the first token (renewed 0.4 s before its 4 s expiry).
    expect(endpoint.count()).toBe(1);
    await clock.advance(599);
    expect(await tokens.current()).toBe('token-1');
    await clock.advance(1);
    expect(await tokens.current()).toBe('token-2');
  });
});
