/**
 * Parses a `Retry-After` header value into a wait in milliseconds, relative to `nowMs`.
 * Forms accepted (CONTRACT.md, 429): delta-seconds ("12"), fractional seconds ("1.5", the Service
 * may send them), and an HTTP-date in any of the three RFC 9110 section 5.6.7 forms
 * (IMF-fixdate, obsolete RFC 850, asctime). Anything else, or no header, gives undefined;
 * a date in the past gives 0.
 */
export function parseRetryAfter(
  value: string | readonly string[] | undefined,
  nowMs: number,
): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (typeof raw !== 'string') return undefined;
  const text = raw.trim();
  if (text === '') return undefined;

  if (/^\d+(\.\d+)?$/.test(text) || /^\.\d+$/.test(text)) {
    const seconds = Number(text);
    if (!Number.isFinite(seconds)) return undefined;
    // Round up: waiting a fraction of a millisecond too little would earn another 429.
    return Math.ceil(seconds * 1000);
  }

  const at = parseHttpDate(text, nowMs);
  if (at === undefined) return undefined;
  return Math.max(0, at - nowMs);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

// Sun, 06 Nov 1994 08:49:37 GMT
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
// Sunday, 06-Nov-94 08:49:37 GMT
const RFC850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
// Sun Nov  6 08:49:37 1994
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

/** Epoch milliseconds of an RFC 9110 HTTP-date, or undefined when `text` is not one. */
export function parseHttpDate(text: string, nowMs: number): number | undefined {
  let m = IMF_FIXDATE.exec(text);
  if (m) return toEpoch(Number(m[3]), m[2], Number(m[1]), m[4], m[5], m[6]);

  m = RFC850.exec(text);
  if (m) return toEpoch(fullYear(Number(m[3]), nowMs), m[2], Number(m[1]), m[4], m[5], m[6]);

  m = ASCTIME.exec(text);
  if (m) return toEpoch(Number(m[6]), m[1], Number(m[2]!.trim()), m[3], m[4], m[5]);

  return undefined;
}

/** RFC 9110: a two-digit year more than 50 years in the future means the previous century. */
function fullYear(twoDigits: number, nowMs: number): number {
  const nowYear = new Date(nowMs).getUTCFullYear();
  let year = Math.floor(nowYear / 100) * 100 + twoDigits;
  if (year > nowYear + 50) year -= 100;
  return year;
}

function toEpoch(
  year: number,
  monthName: string | undefined,
  day: number,
  hh: string | undefined,
  mm: string | undefined,
  ss: string | undefined,
): number | undefined {
  const month = MONTHS.indexOf(monthName ?? '');
  const [h, mi, s] = [Number(hh), Number(mm), Number(ss)];
  // Leap second 60 is allowed by the grammar; treat it as 59 rather than rolling the minute.
  if (month < 0 || h > 23 || mi > 59 || s > 60) return undefined;
  const at = Date.UTC(year, month, day, h, mi, Math.min(s, 59));
  // Date.UTC rolls 31 Feb into March; a date that does not exist is garbage, not a wait.
  if (new Date(at).getUTCDate() !== day) return undefined;
  return at;
}
