// The interactive API reference at /docs in a real headless browser (Debian's chromium, driven by
// playwright-core) against a real socket: it renders the document with every request the page makes
// answered by the service itself. A request to any other host is refused and recorded, and none may
// be attempted (the vendor's fonts, agent, MCP generator, hosted client or registry); the buttons of
// the vendor's services are not shown, and "Test Request" still sends a request to the service.
// The browser is the run's (test/peers/); without Chromium installed the test is skipped, saying so (CI installs it: .ci/run).
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp } from '../helpers/app.ts';
import { browserAvailable, browserContext } from '../helpers/browser.ts';

/** Labels of the controls that need the vendor's services, in any of their forms. */
const VENDOR_CONTROLS = [/Ask AI/i, /Generate MCP/i, /Connect MCP/i, /Deploy/i, /Developer Tools/i, /Open API Client/i, /Upload Document/i];

describe.skipIf(!browserAvailable)('the API reference in a browser', () => {
  let app: FastifyInstance;
  let base = '';
  let browser: BrowserContext;

  beforeAll(async () => {
    app = await testApp();
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    // A fresh context of a browser of which nothing reaches the network: only the page's requests are seen.
    browser = await browserContext({
      viewport: { width: 1400, height: 900 },
    });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('renders offline: no request leaves the service, no control of the vendor\'s services is shown', { timeout: 150_000 }, async () => {
    const origin = new URL(base).origin;
    const local: string[] = [];
    const refused: string[] = [];
    await browser.route('**/*', async (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin) {
        local.push(url);
        await route.continue();
      } else {
        refused.push(url);
        await route.abort('blockedbyclient');
      }
    });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));

    await page.goto(`${base}/docs`);
    // The document is rendered: its title and an operation of it.
    await page.getByRole('heading', { name: 'Revenue Data Service API', level: 1 }).waitFor({ timeout: 60_000 });
    await page.getByRole('heading', { name: 'Search and list contacts' }).waitFor({ timeout: 60_000 });
    await page.waitForLoadState('networkidle');

    const text = await page.locator('body').innerText();
    for (const label of VENDOR_CONTROLS) expect(text, `shows ${label}`).not.toMatch(label);
    // The page's fonts are the system's: no face is declared with a remote source.
    // (A string: the project's TypeScript has no DOM library.)
    const remoteFaces = await page.evaluate(`[...document.styleSheets].flatMap((sheet) => {
      try {
        return [...sheet.cssRules].filter((rule) => rule instanceof CSSFontFaceRule && /url\\(\\s*['"]?https?:/i.test(rule.cssText)).map((rule) => rule.cssText);
      } catch {
        return ['unreadable stylesheet ' + sheet.href];
      }
    })`);
    expect(remoteFaces).toEqual([]);

    // "Test Request" opens the request editor bundled with the page, which sends to the service itself.
    await page.getByRole('button', { name: /Test Request/i }).first().click();
    const send = page.getByRole('button', { name: /^Send/ }).first();
    await send.waitFor();
    const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/v1/contacts');
    await send.click();
    // No key was entered: the service's own 401.
    const answer = await answered;
    expect(answer.url().startsWith(`${base}/v1/contacts?`)).toBe(true);
    expect(answer.status()).toBe(401);
    expect(await answer.json()).toEqual({ type: 'authentication_failed', detail: 'API key not associated with an organization' });
    await page.waitForLoadState('networkidle');

    expect(refused).toEqual([]);
    expect(local).toContain(`${base}/v1/openapi.json`);
    expect(errors).toEqual([]);
    expect(await page.title()).toBe('Revenue Data Service API');
  });
});
