/** Polls `what` every 25 ms until it holds; fails after `ms`, naming what was awaited. */
export async function until(what: () => boolean | Promise<boolean>, ms = 10_000, label = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!(await what())) {
    if (Date.now() > end) throw new Error(`${label} not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The first value `find` yields (not undefined) within `ms`. */
export async function eventually<T>(
  find: () => T | undefined | Promise<T | undefined>,
  ms = 10_000,
  label = 'value',
): Promise<T> {
  let found: T | undefined;
  await until(async () => (found = await find()) !== undefined, ms, label);
  return found as T;
}
