// The web dashboard end to end in a real headless browser (Debian's chromium, driven by
// playwright-core) against a real socket: sign in with a test key, find a sandbox contact by search
// and read its timeline, create a deal and move it on the board (by drag-and-drop, then by keyboard
// into a stage whose checklist refuses it), watch an event arrive live, launch a campaign, import a
// CSV and follow it to its end, create and revoke a key. No Content-Security-Policy violation and no
// page error may occur. With DASHBOARD_SCREENSHOTS=1 it also writes the screenshots of docs/screenshots/.
// Without /usr/bin/chromium the test is skipped, saying so (CI installs it: .ci/run).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp } from '../helpers/app.ts';
import { receiver } from '../helpers/receiver.ts';
import { endpoint } from '../helpers/webhooks.ts';

const CHROMIUM = '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available) {
  console.warn(`BROWSER TESTS DID NOT RUN: ${CHROMIUM} is missing. Install it with \`apt-get install -y chromium\` (CI does, in .ci/run) to run test/browser/.`);
}
const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS ? join(import.meta.dirname, '../../docs/screenshots') : undefined;

describe.skipIf(!available)('the web dashboard in a browser', () => {
  let app: FastifyInstance;
  let base = '';
  let browser: BrowserContext;
  const profile = mkdtempSync(join(tmpdir(), 'dashboard-'));

  beforeAll(async () => {
    app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_PER_MINUTE: '100000' } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      viewport: { width: 1280, height: 800 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    rmSync(profile, { recursive: true, force: true });
  });

  const shoot = async (page: Page, name: string) => {
    // A token shown once is masked: a picture in the docs holds no credential, even a throwaway one.
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), mask: [page.getByLabel('New API key token')] });
  };

  it('works through every main screen with a test key', { timeout: 90_000 }, async () => {
    const t = await tenant(app);
    const hook = await receiver();
    await endpoint(t.test, hook.url, ['company.created']);
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => { if (/Content.Security.Policy|Refused/i.test(m.text())) problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(e.message));
    const heading = () => page.getByRole('heading', { level: 1 });

    // Sign in: the organization's name and the TEST MODE banner.
    await page.goto(`${base}/dashboard`);
    await shoot(page, 'sign-in');
    await page.getByLabel('API key').fill(t.test_token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const org = (await t.test.get('/v1/organization')).json().data;
    await expect.poll(() => page.locator('.org strong').textContent()).toBe(org.name);
    expect(await page.getByRole('note').textContent()).toMatch(/^TEST MODE/);
    expect(await page.evaluate(() => sessionStorage.getItem('rds.apiKey'))).toBe(t.test_token);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);

    // A sandbox contact, found by search; its page shows its timeline (with a note made for it).
    // The oldest sandbox contact: not on the first page of the unfiltered table.
    const contact = (await t.test.get('/v1/contacts?limit=200')).json().data.at(-1);
    await t.test.post(`/v1/contacts/${contact.id}/notes`, { content: 'Asked for the security review' });
    const found = (await t.test.post('/v1/search/contacts', { q: contact.name })).json();
    await expect.poll(() => page.locator('.pager').textContent()).toMatch(/Page 1 · \d+ in all/);
    expect(await page.getByRole('link', { name: contact.name }).count()).toBe(0);
    await page.getByLabel('Search contacts').fill(contact.name);
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.locator('.pager').textContent()).toBe(`Previous pagePage 1 · ${found.pagination.total} in allNext page`);
    expect(await page.locator('tbody tr').count()).toBe(found.data.length);
    expect(await page.getByRole('link', { name: contact.name }).count()).toBeGreaterThan(0);
    await shoot(page, 'contacts');
    await page.getByRole('link', { name: contact.name }).first().click();
    await expect.poll(() => heading().textContent()).toBe(contact.name);
    const timeline = page.getByRole('region', { name: /Timeline/ });
    await expect.poll(() => timeline.getByRole('listitem').first().textContent()).toContain('Asked for the security review');
    await shoot(page, 'contact');

    // Its list: the list's page names its members, the contact among them.
    const list = (await t.test.get(`/v1/lists/${contact.list_id}`)).json().data;
    await page.getByRole('link', { name: 'Lists' }).click();
    await page.getByRole('link', { name: list.name }).click();
    const members = page.getByRole('region', { name: /Members/ });
    await expect.poll(() => members.getByRole('heading').textContent()).toBe(`Members (${list.member_count})`);
    if (list.member_count <= 25) expect(await members.getByRole('link', { name: contact.name }).count()).toBe(1);

    // The board: a new deal starts in the first stage, is dragged to Discovery, then refused Proposal.
    await page.getByRole('link', { name: 'Pipeline' }).click();
    await expect.poll(() => page.locator('.stage').count()).toBe(6);
    await page.getByLabel('Deal name').fill('Dashboard pilot');
    await page.getByLabel('Amount').fill('1200');
    await page.getByRole('button', { name: 'Create deal' }).click();
    const column = (stage: string) => page.getByRole('region', { name: `Stage ${stage}` });
    const card = page.locator('.card', { hasText: 'Dashboard pilot' });
    await expect.poll(() => column('Qualification').locator('.card', { hasText: 'Dashboard pilot' }).count()).toBe(1);
    await card.dragTo(column('Discovery'));
    await expect.poll(() => column('Discovery').locator('.card', { hasText: 'Dashboard pilot' }).count()).toBe(1);
    const deal = (await t.test.get('/v1/deals?name=Dashboard%20pilot')).json().data[0];
    expect(deal.amount).toBe(120000);
    const pipeline = (await t.test.get(`/v1/deals/pipelines/${deal.pipeline_id}`)).json().data;
    const stageId = (name: string) => pipeline.stages.find((s: { name: string }) => s.name === name).id;
    expect(deal.stage_id).toBe(stageId('Discovery'));

    await page.getByLabel('Move Dashboard pilot to').selectOption({ label: 'Move to Proposal' });
    const refusal = page.getByRole('alert').filter({ hasText: 'cannot enter Proposal' });
    await expect.poll(() => refusal.count()).toBe(1);
    const { missing } = (await t.test.patch(`/v1/deals/${deal.id}`, { stage_id: stageId('Proposal') })).json();
    expect(missing.length).toBeGreaterThan(0);
    expect(await refusal.locator('.missing li').allTextContents()).toEqual(missing);
    expect((await t.test.get(`/v1/deals/${deal.id}`)).json().data.stage_id).toBe(stageId('Discovery'));
    await shoot(page, 'pipeline');
    // The user may let it in all the same: the move is forced, and recorded so.
    await refusal.getByRole('button', { name: 'Move anyway' }).click();
    await expect.poll(() => column('Proposal').locator('.card', { hasText: 'Dashboard pilot' }).count()).toBe(1);
    expect(await refusal.count()).toBe(0);
    const moved = (await t.test.get(`/v1/events?type=deal.stage_changed&limit=1`)).json().data[0];
    expect(moved.data.object).toMatchObject({ id: deal.id, stage_id: stageId('Proposal'), forced: true });

    // Campaigns: a draft is launched from its button.
    await page.getByRole('link', { name: 'Campaigns' }).click();
    const draft = (await t.test.get('/v1/campaigns?status=draft')).json().data[0];
    expect(draft).toBeDefined();
    await page.getByRole('button', { name: `Launch ${draft.name}` }).click();
    await expect.poll(async () => (await t.test.get(`/v1/campaigns/${draft.id}`)).json().data.status).toBe('active');
    await expect.poll(() => page.getByRole('button', { name: `Launch ${draft.name}` }).count()).toBe(0);
    await shoot(page, 'campaigns');

    // Imports: a small CSV goes onto a list and is followed to its end, with the row it refused.
    const importList = (await t.test.post('/v1/lists', { name: 'Imported from a spreadsheet', type: 'contacts' })).json().data;
    await page.getByRole('link', { name: 'Imports' }).click();
    await page.getByLabel('CSV file').setInputFiles({
      name: 'people.csv', mimeType: 'text/csv',
      buffer: Buffer.from('Email,First Name,Job Title\nada@import.example,Ada,CTO\nnot-an-email,Bob,CEO\ngrace@import.example,Grace,VP\n'),
    });
    await expect.poll(() => page.getByRole('option', { name: importList.name }).count()).toBe(1);
    await page.getByLabel('List', { exact: true }).selectOption({ label: importList.name });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Import of people.csv started: 3 rows.' }).count()).toBe(1);
    const imported = page.getByRole('row', { name: /people\.csv/ });
    await expect.poll(() => imported.locator('.state').textContent(), { timeout: 15_000 }).toBe('completed with errors');
    expect(await imported.getByRole('progressbar').getAttribute('value')).toBe('3');
    expect(await imported.locator('td').allTextContents()).toEqual(expect.arrayContaining(['contacts', '2', '1']));
    await shoot(page, 'imports');
    await imported.getByRole('button', { name: 'Show the errors of people.csv' }).click();
    await expect.poll(() => page.getByRole('row', { name: /^3 Email/ }).count()).toBe(1);
    const importedContacts = await t.test.get(`/v1/contacts?list_id=${importList.id}`);
    expect(importedContacts.json().data.map((c: { work_email: string }) => c.work_email).sort()).toEqual(['ada@import.example', 'grace@import.example']);

    // Live events: a write made elsewhere appears while the page is open.
    await page.getByRole('link', { name: 'Live events' }).click();
    await expect.poll(() => page.locator('.stream').textContent()).toMatch(/connected/);
    await t.test.post('/v1/companies', { name: 'Streamed Industries' });
    const log = page.getByRole('log');
    await expect.poll(() => log.getByRole('listitem').first().textContent(), { timeout: 10_000 }).toContain('Streamed Industries');
    expect(await log.getByRole('listitem').first().locator('.event-type').textContent()).toBe('company.created');
    await shoot(page, 'events');

    // Usage: the month's balance as a chart.
    await page.getByRole('link', { name: 'Usage' }).click();
    await expect.poll(() => page.getByRole('img', { name: 'Credit balance by day this month' }).count()).toBe(1);
    await shoot(page, 'usage');

    // Webhooks: the endpoint's delivery of that event, sent again from its Redeliver button.
    await hook.until((got) => got.length === 1);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const delivery = page.getByRole('row', { name: /company\.created/ });
    await expect.poll(() => delivery.locator('.state').textContent()).toBe('succeeded');
    await shoot(page, 'webhooks');
    await delivery.getByRole('button', { name: /^Redeliver company\.created/ }).click();
    const [first, again] = await hook.until((got) => got.length === 2);
    expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Sent company.created again.' }).count()).toBe(1);

    // API keys: a key is created (its token shown once), then revoked, and then refused by the API.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Key name').fill('Temporary integration');
    await page.getByRole('button', { name: 'Create key' }).click();
    const token = await page.getByLabel('New API key token').inputValue();
    expect(token).toMatch(/^svc_test_/);
    expect((await app.inject({ url: '/v1/organization', headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(200);
    await shoot(page, 'api-keys');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('button', { name: 'Revoke Temporary integration' }).click();
    await page.getByRole('button', { name: 'Confirm revoke' }).click();
    await expect.poll(() => page.getByRole('row', { name: /Temporary integration/ }).count()).toBe(0);
    expect((await app.inject({ url: '/v1/organization', headers: { authorization: `Bearer ${token}` } })).statusCode).toBe(401);

    expect(problems).toEqual([]);
    await page.close();
  });

  it('refuses a wrong key, keeps a live key through a reload, and signs out once the key is revoked', async () => {
    const t = await tenant(app);
    const page = await browser.newPage();
    await page.goto(`${base}/dashboard#/deals`);
    await page.getByLabel('API key').fill('svc_live_not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('This key was refused: API key not associated with an organization');
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    await page.getByLabel('API key').fill(t.live_token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Deals');
    expect(await page.locator('.mode').textContent()).toBe('Live mode');
    expect(await page.getByRole('note').count()).toBe(0);
    await page.reload();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Deals');
    // The screen's heading has the focus, so keyboard users start there.
    await expect.poll(() => page.evaluate('document.activeElement.tagName')).toBe('H1');

    const keys = (await t.live.get('/auth/v1/api-keys')).json().data.keys;
    const own = keys.find((k: { name: string }) => k.name === 'Default live key');
    await t.live.delete(`/auth/v1/api-keys/${own.api_key_id}`);
    await page.getByRole('link', { name: 'Companies' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Signed out: API key not associated with an organization.');
    expect(await page.getByLabel('API key').count()).toBe(1);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.close();
  });
});
