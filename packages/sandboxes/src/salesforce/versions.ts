/**
 * The API versions the sandbox org offers, as a real org lists them at `GET /services/data`
 * (`[{label, url, version}]`, oldest first; REST API Developer Guide, "Versions"), and how it
 * answers a request under a version it does not offer: 410 GONE below the oldest (retired:
 * 21.0-30.0 since Summer '25, Salesforce Help 000354473), 404 NOT_FOUND above the newest (a
 * version that does not exist yet).
 */
export interface VersionRange {
  /** Major numbers, e.g. 31 and 68. */
  oldest: number;
  newest: number;
}

/** Winter '27 is 68.0; each release adds one: Winter, Spring, Summer. */
const WINTER_27 = 68;
const SEASONS = ['Winter', 'Spring', 'Summer'] as const;

/** The release name of a major version, e.g. 31 → "Summer '14", 68 → "Winter '27". */
export function releaseLabel(major: number): string {
  const offset = major - WINTER_27;
  const season = SEASONS[((offset % 3) + 3) % 3]!;
  const year = 27 + Math.floor(offset / 3);
  return `${season} '${String(year).padStart(2, '0')}`;
}

export class OfferedVersions {
  constructor(public range: VersionRange) {}

  list(): { label: string; url: string; version: string }[] {
    const out = [];
    for (let major = this.range.oldest; major <= this.range.newest; major++) {
      out.push({ label: releaseLabel(major), url: `/services/data/v${major}.0`, version: `${major}.0` });
    }
    return out;
  }

  /** Why a request under `version` (e.g. "62.0") is refused, or undefined when it is served. */
  refusal(version: string): { status: number; errorCode: string; message: string } | undefined {
    const major = Number.parseInt(version, 10);
    if (major < this.range.oldest) {
      return { status: 410, errorCode: 'GONE', message: `API version ${version} has been retired` };
    }
    if (major > this.range.newest || !/^\d+\.0$/.test(version)) {
      return { status: 404, errorCode: 'NOT_FOUND', message: 'The requested resource does not exist' };
    }
    return undefined;
  }
}
