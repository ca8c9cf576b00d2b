/**
 * Keeps a one-shot command's process running until `release()`. The core's timers (backoff,
 * budget waits) are unref'd so that they never hold a finished process open; a command that is
 * only waiting on one of them would otherwise end early, with exit code 13 (unsettled await).
 */
export function holdProcessOpen(): () => void {
  const handle = setInterval(() => {}, 2 ** 30);
  return () => clearInterval(handle);
}
