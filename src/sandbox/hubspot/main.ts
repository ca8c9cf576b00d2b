// Placeholder until the hubspot sandbox lands.
export async function runHubSpotSandbox(_opts: Record<string, string>): Promise<void> {
  throw new Error('the hubspot sandbox is not built yet');
}
