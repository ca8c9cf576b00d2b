import { utc } from '../format.js';

/** A moment as the console shows every time (format.ts, utc), with the exact instant on hover. */
export function When({ at }: { at: Date | string | null | undefined }) {
  if (at === null || at === undefined) return <>{utc(at)}</>;
  const iso = (typeof at === 'string' ? new Date(at) : at).toISOString();
  return (
    <time datetime={iso} title={iso}>
      {utc(at)}
    </time>
  );
}
