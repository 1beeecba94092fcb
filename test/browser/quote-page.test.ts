// The public quote page in a real headless browser (Debian's chromium, driven by playwright-core):
// the app serves a real socket, the recipient opens the link, sees the total, accepts in their name
// and sees the accepted state; the page runs under its own Content-Security-Policy with no
// violation. The browser is the run's (test/peers/); without Chromium installed the test is skipped, saying so (CI installs it: .ci/run).
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp } from '../helpers/app.ts';
import { browserAvailable, browserContext } from '../helpers/browser.ts';
import { sentQuote } from '../helpers/quotes.ts';

describe.skipIf(!browserAvailable)('the public quote page in a browser', () => {
  let app: FastifyInstance;
  let base = '';
  let browser: BrowserContext;

  beforeAll(async () => {
    app = await testApp({ env: { PUBLIC_RATE_LIMIT_PER_SECOND: '1000', PUBLIC_RATE_LIMIT_PER_MINUTE: '100000' } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    // A fresh context of a browser of which nothing reaches the network: the machine may have none.
    browser = await browserContext({
    });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('opens the link, shows the total, accepts in the signer\'s name and shows the accepted state', async () => {
    const t = await tenant(app);
    const q = await sentQuote(t.live, { title: '<script>window.pwned = 1</script> Team plan', tax_percent: 20 });
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (m) => { if (/Content.Security.Policy|Refused/i.test(m.text())) violations.push(m.text()); });
    page.on('pageerror', (e) => violations.push(e.message));

    await page.goto(`${base}/q/${q.public_token}`);
    await expect.poll(() => page.locator('#total').textContent()).toBe('$3,600.00');
    expect(await page.locator('h1').textContent()).toBe('<script>window.pwned = 1</script> Team plan');
    expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
    expect(await page.locator('#status').textContent()).toBe('Awaiting your answer');

    // An empty name is held back by the form itself; then the signer types their name.
    await page.getByRole('button', { name: 'Accept quote' }).click();
    expect((await t.live.get(`/v1/quotes/${q.id}`)).json().data.status).toBe('viewed');
    await page.getByLabel('Your full name').fill('Ada Lovelace');
    await page.getByRole('button', { name: 'Accept quote' }).click();
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 10_000 }).toMatch(/^Accepted by Ada Lovelace on /);
    expect(await page.getByRole('button', { name: 'Accept quote' }).count()).toBe(0);

    const accepted = (await t.live.get(`/v1/quotes/${q.id}`)).json().data;
    expect(accepted).toMatchObject({ status: 'accepted', signer_name: 'Ada Lovelace', signer_ip: '127.0.0.1' });
    expect(violations).toEqual([]);
    await page.close();
  });

  it('shows the service\'s refusal on the page when the quote can no longer be answered', async () => {
    const t = await tenant(app);
    const q = await sentQuote(t.live);
    const page = await browser.newPage();
    await page.goto(`${base}/q/${q.public_token}`);
    await t.live.post(`/v1/quotes/${q.id}/void`);
    await page.getByLabel('Reason for declining (optional)').fill('Too late');
    await page.getByRole('button', { name: 'Decline quote' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('A quote that is void cannot be declined');
    await page.reload();
    expect(await page.locator('#status').textContent()).toBe('This quote was withdrawn by the seller');
    await page.close();
  });
});
