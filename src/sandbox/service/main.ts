// Placeholder until the service sandbox lands.
export async function runServiceSandbox(_opts: Record<string, string>): Promise<void> {
  throw new Error('the service sandbox is not built yet');
}
