// The dashboard's e-mail screens in a real headless browser (the run's Chromium, playwright-core),
// in one session: a sending domain added from its screen shows the DNS records to publish, each
// value with a copy button that puts it in the clipboard, and "Verify now" shows what a real DNS
// server (dnsmasq, publishing none of them) found; a thread received through the inbound URL shows in
// the inbox and closes from its page; a mailbox made on its screen sends a test message, which shows in the outbox, and simulating
// "opened" on its page records it. No Content-Security-Policy violation and no page error may occur.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp } from '../helpers/app.ts';
import { browserAvailable, browserContext, signedIn } from '../helpers/browser.ts';
import { dnsAvailable, DnsServer } from '../helpers/dns.ts';
import { emailConnection, inboundUrl, rawMail, receive } from '../helpers/inbox.ts';

describe.skipIf(!browserAvailable || !dnsAvailable)('the e-mail screens of the dashboard in a browser', () => {
  let app: FastifyInstance;
  let dns: DnsServer;
  let base = '';
  let browser: BrowserContext;

  beforeAll(async () => {
    dns = await DnsServer.start();
    app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_PER_MINUTE: '100000', DNS_SERVERS: dns.address } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    browser = await browserContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US', timezoneId: 'Asia/Kolkata' });
    await browser.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await dns?.close();
  });

  const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();
  const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();

  it('adds and verifies a domain, closes a thread, and simulates an outcome of a sent message', { timeout: 120_000 }, async () => {
    const t = await tenant(app);
    const { page, problems } = await signedIn(browser, base, t.test_token);

    // A sending domain: its records to publish, a value copied, and a check that finds them missing.
    await nav(page, 'Sending domains');
    await page.getByText('New sending domain').click();
    await page.locator('#new-domain').fill('mail.dashboard.test');
    await page.getByRole('button', { name: 'Create sending domain' }).click();
    await expect.poll(() => heading(page), { timeout: 20_000 }).toBe('mail.dashboard.test');
    const domain = (await t.test.get('/v1/domains?domain=mail.dashboard.test')).json().data[0];
    const records = page.getByRole('region', { name: 'DNS records to publish' });
    const rows = records.locator('tbody tr');
    expect(await rows.count()).toBe(domain.records.length);
    const first = domain.records[0];
    expect(await rows.first().locator('code.dns-value').textContent()).toBe(first.value);
    const copy = page.getByRole('button', { name: `Copy ${first.purpose} value` });
    await copy.click();
    await expect.poll(() => copy.textContent()).toBe('Copied');
    // The page's navigator (a browser's), not the one Node's types describe.
    expect(await page.evaluate(() => (navigator as unknown as { clipboard: { readText(): Promise<string> } }).clipboard.readText())).toBe(first.value);
    await page.getByRole('button', { name: 'Verify now' }).click();
    await expect.poll(() => records.getByRole('status').textContent(), { timeout: 30_000 }).toBe('Checked: failed.');
    const checked = (await t.test.get(`/v1/domains/${domain.id}`)).json().data;
    expect(checked.records[0].finding).toBeTruthy();
    expect(await rows.first().locator('td').last().textContent()).toBe(checked.records[0].finding);

    // The inbox: a thread received through the inbound URL, closed from its page.
    const link = await inboundUrl(t.test, await emailConnection(t.test));
    await receive(app, link, rawMail({ subject: 'Pilot next week', text: 'Tuesday works for us.' }));
    await nav(page, 'Inbox');
    await page.getByLabel('Status').selectOption('open');
    await page.getByRole('link', { name: 'Pilot next week' }).click();
    await expect.poll(() => heading(page), { timeout: 20_000 }).toBe('Pilot next week');
    await expect.poll(() => page.locator('.message-text').first().textContent()).toContain('Tuesday works for us.');
    await page.getByRole('button', { name: 'Close', exact: true }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Operations' }).locator('.state').first().textContent()).toBe('closed');
    await page.getByRole('button', { name: 'Reopen' }).waitFor();
    const thread = (await t.test.get('/v1/inbox?limit=1')).json().data[0];
    expect(thread.status).toBe('closed');

    // A mailbox made from its screen on the connection above, and its test message.
    await nav(page, 'Mailboxes');
    await page.getByText('New mailbox').click();
    await page.locator('#new-email').fill('ada@dashboard.test');
    await expect.poll(() => page.locator('#new-connection_id option').count()).toBe(2);
    await page.locator('#new-connection_id').selectOption({ label: 'Sales mailbox' });
    await page.getByRole('button', { name: 'Create mailbox' }).click();
    await expect.poll(() => heading(page), { timeout: 20_000 }).toBe('ada@dashboard.test');
    const mailbox = (await t.test.get('/v1/mailboxes?email=ada@dashboard.test')).json().data[0];
    expect(mailbox.connection_id).toBe(thread.connection_id);
    await page.getByRole('button', { name: 'Send test message' }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Send a test message' }).getByRole('status').textContent(), { timeout: 20_000 }).toMatch(/^Sent: /);

    // The outbox: that test message, opened by simulation.
    const sent = { outbox_message_id: (await t.test.get(`/v1/outbox?mailbox_id=${mailbox.id}`)).json().data[0].id };
    await nav(page, 'Outbox');
    await page.locator(`a[href="#/outbox/${sent.outbox_message_id}"]`).click();
    await page.getByRole('button', { name: 'Simulate opened' }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Message' }).getByRole('status').textContent(), { timeout: 20_000 }).toBe('Simulated: opened.');
    expect((await t.test.get(`/v1/outbox/${sent.outbox_message_id}`)).json().data.opened_at).toBeTypeOf('number');

    expect(problems).toEqual([]);
    await page.close();
  });
});
