// Its own module: state.ts holds the fault log and faultInjection.ts writes it, so neither imports the other for it.

/** One faulted API request, as `GET /_admin/faults/log` shows it. */
export interface FaultRecord {
  at: string;
  /** Endpoint label, e.g. `POST /v1/calls/:id/followups`. */
  endpoint: string;
  callId?: string;
  /** `500`, `502`, `503`, `429`, `stall`, `drop-before`, `drop-mid`. */
  fault: string;
  /** The client cannot tell whether the request was acted on. */
  ambiguous: boolean;
  /** The request had its side effect (a write whose handler answered 2xx). */
  acted: boolean;
  /** From POST /_admin/faults/next rather than the random rates. */
  scripted: boolean;
}
