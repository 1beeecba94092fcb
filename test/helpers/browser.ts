// The run's browser (test/peers/chromium.peer.ts, started once by the global set-up): each test
// file works in a fresh context of its own, as private as a fresh profile. Where Chromium is not
// installed (allowed outside CI only) the browser tests are skipped, and the run says so.
import { chromium, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { expect, inject } from 'vitest';

export const browserAvailable = inject('peers').chromium != null;
if (!browserAvailable) {
  console.warn('BROWSER TESTS DID NOT RUN: /usr/bin/chromium is missing. Install it with `apt-get install -y chromium` (CI does, in .ci/run) to run test/browser/.');
}

/** A fresh context of the run's browser; closing it ends this file's connection, not the browser. */
export async function browserContext(options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const browser = await chromium.connectOverCDP(inject('peers').chromium!);
  const context = await browser.newContext(options);
  context.on('close', () => void browser.close());
  return context;
}

/**
 * A new page of the dashboard at `base`, signed in with `token` (on the Contacts screen), and the
 * Content-Security-Policy violations and page errors seen on it, which a test expects to stay empty.
 */
export async function signedIn(browser: BrowserContext, base: string, token: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => { if (/Content.Security.Policy|Refused/i.test(m.text())) problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${base}/dashboard`);
  await page.getByLabel('API key').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 20_000 }).toBe('Contacts');
  return { page, problems };
}
