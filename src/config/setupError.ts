/**
 * A failure at start that is the admin's to fix (a setting, a missing database or role): the CLI
 * prints its message alone, one plain sentence and the fix, and exits 2, which the systemd unit
 * does not restart on (RestartPreventExitStatus=2). `doctor` shows the two parts as its check.
 */
export class SetupError extends Error {
  constructor(
    /** What is wrong, one sentence. */
    readonly problem: string,
    /** What the admin does about it, one sentence. */
    readonly fix: string,
    options?: { cause?: unknown },
  ) {
    super(`${problem} ${fix}`, options);
    this.name = 'SetupError';
  }
}
