// Placeholder until the salesforce sandbox lands.
export async function runSalesforceSandbox(_opts: Record<string, string>): Promise<void> {
  throw new Error('the salesforce sandbox is not built yet');
}
