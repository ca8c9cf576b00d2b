/** A command given arguments it cannot use (a malformed email, contradictory flags): exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
