import { existsSync } from 'node:fs';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`; .ci/run installs it when missing). */
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/**
 * Where Chromium is missing the browser suites are skipped, loudly, so `npm install && npm test` passes on a
 * machine without it. Under CI (`CI` set, as `.ci/run` runs) a missing browser fails them instead.
 */
export const HAVE_BROWSER = existsSync(CHROMIUM) || !!process.env.CI;
export const describeBrowser: jest.Describe = HAVE_BROWSER ? describe : describe.skip;
if (!HAVE_BROWSER) {
  console.warn(
    `Skipping the browser tests: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`,
  );
}

/** One headless Chromium per test file; pages and contexts are cheap, browsers are not. */
/** Answers a page asks for knowing they may be 404s (the console still reports them). */
const EXPECTED_MISSES = [/\/v1\/me\/delegation$/];

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The browser tests need Chromium at ${CHROMIUM}: apt-get install -y chromium, or set CHROMIUM_PATH`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  /** Every URL the page asked for, to prove it reaches nothing but the service. */
  requests: string[];
  /** Console errors and CSP violations. */
  errors: string[];
}

/** A fresh context (its own storage) and page; with a token, already signed in through sessionStorage. */
export async function openPage(
  browser: Browser,
  opts: { token?: string; width?: number; height?: number } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1200, height: opts.height ?? 900 } });
  context.setDefaultTimeout(10_000);
  if (opts.token) await context.addInitScript((t) => sessionStorage.setItem('tollgate.token', t), opts.token);
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    // "No delegation" is a 404 the Settings page asks for and expects; Chromium logs every 4xx as an error.
    if (m.type() === 'error' && !EXPECTED_MISSES.some((p) => p.test(m.location().url))) errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(String(e)));
  return { context, page, requests, errors };
}

/** Waits until the page's live stream is connected. */
export async function waitLive(page: Page): Promise<void> {
  await page.locator('[data-testid="stream-state"]', { hasText: 'Live' }).waitFor();
}

/** A promise plus whether it has settled yet, to show that a long-poll was still waiting. */
export function tracked<T>(p: Promise<T>): { promise: Promise<T>; settled(): boolean } {
  let done = false;
  const promise = p.finally(() => {
    done = true;
  });
  return { promise, settled: () => done };
}
