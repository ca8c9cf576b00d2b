/**
 * Where a process gets the refresh token it presents, and where a token the CRM rotates goes.
 * Salesforce (with refresh token rotation on) retires the presented token on every refresh and
 * hands back a new one; every process that refreshes (replicas, the CLI) must then present that
 * new one. `refresh` runs with the newest token and reports the token the CRM handed back.
 */
export interface RefreshOutcome<T> {
  result: T;
  /** The refresh token in the CRM's answer, when it sent one. */
  refreshToken?: string | undefined;
}

export interface RefreshTokenStore {
  /**
   * Runs one refresh with the newest refresh token, storing a rotated one before returning.
   * Serialised across every process sharing the store, so no two present the same token.
   */
  refreshWith<T>(refresh: (token: string) => Promise<RefreshOutcome<T>>): Promise<T>;
  /** Whether other processes see what this store keeps (false: this process alone). */
  readonly shared: boolean;
}

/**
 * This process alone: the configured token, replaced in memory by a rotated one. Without a
 * CREDENTIALS_KEY nothing else can be trusted with the token; `onUnsharedRotation` says so.
 */
export function memoryRefreshTokens(
  configured: string,
  onUnsharedRotation: () => void = () => {},
): RefreshTokenStore {
  let current = configured;
  let tail: Promise<unknown> = Promise.resolve();
  return {
    shared: false,
    refreshWith<T>(refresh: (token: string) => Promise<RefreshOutcome<T>>): Promise<T> {
      const run = tail.then(async () => {
        const outcome = await refresh(current);
        if (outcome.refreshToken && outcome.refreshToken !== current) {
          current = outcome.refreshToken;
          onUnsharedRotation();
        }
        return outcome.result;
      });
      tail = run.catch(() => undefined);
      return run;
    },
  };
}
