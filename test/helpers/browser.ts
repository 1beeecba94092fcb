// The run's browser (test/peers/chromium.peer.ts, started once by the global set-up): each test
// file works in a fresh context of its own, as private as a fresh profile. Where Chromium is not
// installed (allowed outside CI only) the browser tests are skipped, and the run says so.
import { chromium, type BrowserContext, type BrowserContextOptions } from 'playwright-core';
import { inject } from 'vitest';

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
