/**
 * Node 20 reached its end of life on 2026-04-30 and some of our dependencies already ask for 22: it still runs,
 * but the operator should hear that it is no longer what CI tests.
 */
export function outdatedNode(version: string): string | undefined {
  const [major, minor] = version.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 12)) return undefined;
  return `Node ${version} is not supported: Tollgate is tested on Node 22.12+ (LTS) and 24${major <= 20 ? '; Node 20 reached its end of life on 2026-04-30' : ''}. It runs, but upgrade Node.`;
}
