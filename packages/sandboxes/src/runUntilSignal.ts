/** Keeps a started sandbox serving until SIGINT or SIGTERM, then closes it. */
export async function runUntilSignal(sandbox: { close(): Promise<void> }): Promise<void> {
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sandbox.close();
}
