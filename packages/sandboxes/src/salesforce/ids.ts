/**
 * Salesforce-shaped record ids: 3-char key prefix + 12 chars, plus the documented 3-char
 * case-safe suffix, so ids look and compare like the real 18-character ones.
 */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SUFFIX = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';

function caseSafeSuffix(id15: string): string {
  let out = '';
  for (let chunk = 0; chunk < 3; chunk++) {
    let bits = 0;
    for (let i = 0; i < 5; i++) {
      const c = id15.charCodeAt(chunk * 5 + i);
      if (c >= 65 && c <= 90) bits |= 1 << i;
    }
    out += SUFFIX[bits];
  }
  return out;
}

export function makeId(keyPrefix: string, n: number): string {
  let body = '';
  let rest = n;
  for (let i = 0; i < 9; i++) {
    body = BASE62[rest % 62] + body;
    rest = Math.floor(rest / 62);
  }
  // "5g" stands in for the pod/instance characters of real ids.
  const id15 = `${keyPrefix}5g${'0'}${body}`.slice(0, 15);
  return id15 + caseSafeSuffix(id15);
}

/** A sequential id source, one per sandbox. */
export function idFactory(start = 1): (keyPrefix: string) => string {
  let n = start;
  return (keyPrefix) => makeId(keyPrefix, n++);
}
