/**
 * Salesforce API versions: the default crm-sync asks for, the oldest it can work with, and the
 * retirements Salesforce has announced (pure; `doctor` compares them with what the org offers). Why
 * 68.0: docs/install.md, section 2, step 7.
 */
export const DEFAULT_API_VERSION = '68.0';

/** Collections upsert, which every write relies on, exists from API 46.0 (REST API Developer Guide). */
export const MIN_API_VERSION = 46;

export interface ApiRetirement {
  /** First and last major version retired together. */
  from: number;
  to: number;
  /** The release that removes them (REST then answers 410 GONE). */
  release: string;
  /**
   * When that release reaches orgs, approximately: Summer releases roll out from May to mid-June,
   * so the first of June stands for them.
   */
  retiredOn: string;
  /** The Salesforce Help article announcing it. */
  source: string;
}

/** Announced retirements, oldest first. Add a row when Salesforce announces the next one. */
export const API_RETIREMENTS: readonly ApiRetirement[] = [
  {
    from: 21,
    to: 30,
    release: "Summer '25",
    retiredOn: '2025-06-01',
    source: 'Salesforce Help 000354473, "Salesforce Platform API Versions 21.0 through 30.0 Retirement"',
  },
  {
    // Deprecated (unsupported) from Summer '27, removed in Summer '28.
    from: 31,
    to: 40,
    release: "Summer '28",
    retiredOn: '2028-06-01',
    source: 'Salesforce Help 005321531, "Salesforce Platform API Versions 31.0 through 40.0 Retirement"',
  },
];

const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

export function majorOf(version: string): number {
  return Number.parseInt(version, 10);
}

export function retirementOf(
  version: string,
  table: readonly ApiRetirement[] = API_RETIREMENTS,
): ApiRetirement | undefined {
  const major = majorOf(version);
  return table.find((r) => major >= r.from && major <= r.to);
}

export interface VersionVerdict {
  ok: boolean;
  /** Offered, but retiring within a year: works today, the admin should move on. */
  warn: boolean;
  detail: string;
  fix?: string | undefined;
}

/**
 * What `doctor` says about the configured version, given the versions the org lists at
 * `/services/data` and the time now.
 */
export function judgeApiVersion(
  configured: string,
  offered: readonly string[],
  nowMs: number,
  table: readonly ApiRetirement[] = API_RETIREMENTS,
): VersionVerdict {
  const sorted = [...offered].sort((a, b) => majorOf(a) - majorOf(b));
  const newest = sorted.at(-1);
  const range = newest ? `${sorted[0]} to ${newest}` : 'none';
  const setIt = `set SALESFORCE_API_VERSION=${newest ?? DEFAULT_API_VERSION} (or leave it unset for ${DEFAULT_API_VERSION})`;
  if (!offered.includes(configured)) {
    const retired = retirementOf(configured, table);
    const why = retired ? ` (retired in ${retired.release})` : '';
    return {
      ok: false,
      warn: false,
      detail: `SALESFORCE_API_VERSION ${configured} is not offered by this org${why}; it offers ${range}`,
      fix: setIt,
    };
  }
  if (majorOf(configured) < MIN_API_VERSION) {
    return {
      ok: false,
      warn: false,
      detail: `SALESFORCE_API_VERSION ${configured} is older than crm-sync needs (${MIN_API_VERSION}.0, for sObject Collections upsert)`,
      fix: setIt,
    };
  }
  const retirement = retirementOf(configured, table);
  if (retirement && Date.parse(retirement.retiredOn) - nowMs <= YEAR_MS) {
    return {
      ok: true,
      warn: true,
      detail: `${configured} is offered, but Salesforce retires ${retirement.from}.0-${retirement.to}.0 in ${retirement.release} (${retirement.source})`,
      fix: setIt,
    };
  }
  return { ok: true, warn: false, detail: `${configured} (the org offers ${range})` };
}
