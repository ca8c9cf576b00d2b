/** How the console writes times and amounts: UTC throughout, like the status table. */

export function utc(at: Date | string | null | undefined): string {
  if (at === null || at === undefined) return '–';
  const d = typeof at === 'string' ? new Date(at) : at;
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '–';
  const s = Math.max(0, Math.round(seconds));
  if (s < 90) return `${s} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  if (s < 48 * 3600) return `${(s / 3600).toFixed(1)} h`;
  return `${Math.round(s / 86400)} days`;
}

export function ago(at: Date | string | null | undefined, now: Date): string {
  if (at === null || at === undefined) return 'never';
  const d = typeof at === 'string' ? new Date(at) : at;
  return `${duration((now.getTime() - d.getTime()) / 1000)} ago`;
}

export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? '–' : n.toLocaleString('en-US');
}
