/**
 * One sentence on whether a call's deal signals reached the CRM (store/dealSignalRepo.ts,
 * callDealSignals), for `status --call` and the console's call page. Pure.
 */

/** callDealSignals' answer, also as it arrives in JSON from the worker (dates as text). */
export interface CallDealSignalsView {
  dealId: string;
  state: string;
  writtenCallId: string | null;
  writtenAt: string | Date | null;
  lastError: string | null;
}

/** `time` writes the moment of the write: ISO by default (the CLI), the console passes its own. */
export function describeCallDealSignals(
  d: CallDealSignalsView | null,
  time: (at: string | Date) => string = (at) => (at instanceof Date ? at.toISOString() : at),
): string {
  if (!d) return '(not on a deal: no deal matched, the deal section is off, or written before deal signals)';
  const at = d.writtenAt === null ? null : time(d.writtenAt);
  const error = d.lastError ? `; last error: ${d.lastError}` : '';
  if (d.state === 'written') {
    const by = d.writtenCallId === null ? '' : ` by the write for call ${d.writtenCallId}`;
    return `written to deal ${d.dealId}${by}${at ? ` at ${at}` : ''}`;
  }
  if (d.state === 'refused') return `refused by the CRM for deal ${d.dealId}${error}`;
  return `due: deal ${d.dealId} not written with this call yet${error}`;
}
