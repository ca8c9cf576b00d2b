import type { ConsoleDeps } from './deps.js';
import { loadOverview } from './overview.js';
import type { StandingWarning } from './warnings.js';

/** The standing warnings, for pages other than the overview (same rules, same reads). */
export async function standingWarningsNow(deps: ConsoleDeps): Promise<StandingWarning[]> {
  return (await loadOverview(deps)).warnings;
}
