// The web dashboard end to end in a real headless browser (Debian's chromium, driven by
// playwright-core) against a real socket, as its users see it: sign in with a test key, find a sandbox
// contact by search and read its fields and timeline, create a deal and move it on the board (by
// drag-and-drop, then by keyboard into a stage whose checklist refuses it), record the missing
// evidence from the board, watch an event arrive live, launch a campaign, import a CSV and follow it
// to its end, read the usage chart, create and revoke a key; list, filter, search and create tasks,
// notes, products and quotes. The browser runs in a time zone of its own (Asia/Kolkata, UTC+5:30) so
// that dates shown in the viewer's zone differ from UTC. No Content-Security-Policy violation and no
// page error may occur. With DASHBOARD_SCREENSHOTS=1 it also writes the screenshots of docs/screenshots/.
// The browser is the run's (test/peers/); without Chromium installed the test is skipped, saying so (CI installs it: .ci/run).
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp } from '../helpers/app.ts';
import { browserAvailable, browserContext } from '../helpers/browser.ts';
import { receiver } from '../helpers/receiver.ts';
import { endpoint } from '../helpers/webhooks.ts';

const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS ? join(import.meta.dirname, '../../docs/screenshots') : undefined;
const ZONE = 'Asia/Kolkata';
/** A moment as the dashboard shows it to a viewer in ZONE with the en-US locale. */
const shown = (seconds: number) => new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: ZONE }).format(seconds * 1000);
const dollars = (cents: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(cents / 100);
const now = () => Math.floor(Date.now() / 1000);

describe.skipIf(!browserAvailable)('the web dashboard in a browser', () => {
  let app: FastifyInstance;
  let base = '';
  let browser: BrowserContext;

  beforeAll(async () => {
    app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_PER_MINUTE: '100000' } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    browser = await browserContext({
      viewport: { width: 1280, height: 800 },
      locale: 'en-US',
      timezoneId: ZONE,
    });
    if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const shoot = async (page: Page, name: string) => {
    // A token or link shown once is masked: a picture in the docs holds no credential, even a throwaway one.
    if (!SCREENSHOTS) return;
    await page.evaluate('scrollTo(0, 0)');
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), mask: [page.getByLabel('New API key token'), page.getByLabel('Public link of the quote')] });
  };

  /** A page signed in with `token` on the contacts screen, and the policy violations and errors it meets. */
  const signedIn = async (token: string) => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => { if (/Content.Security.Policy|Refused/i.test(m.text())) problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(`${base}/dashboard`);
    await page.getByLabel('API key').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Contacts');
    return { page, problems };
  };
  const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();
  const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();
  /** Picks a record by name in a picker: types the name, then takes the first suggestion. */
  const pick = async (page: Page, picker: Locator, name: string) => {
    await picker.fill(name);
    const suggestion = page.locator(`#${await picker.getAttribute('list')} option`).first();
    await expect.poll(() => suggestion.count()).toBe(1);
    await picker.fill(String(await suggestion.getAttribute('value')));
  };
  /** The value shown beside a label of a record's details. */
  const detail = (page: Page, label: string) => page.locator('.fields > dt', { hasText: new RegExp(`^${label}$`) }).locator('xpath=following-sibling::dd[1]');

  it('works through every main screen with a test key', { timeout: 90_000 }, async () => {
    const t = await tenant(app);
    const hook = await receiver();
    await endpoint(t.test, hook.url, ['company.created']);
    // A key that ends two seconds from now: by the time the API keys screen opens, it has expired.
    const expiring = (await t.test.post('/auth/v1/api-keys', { name: 'Expired integration', mode: 'test', expires_at: now() + 2 })).json().data;
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => { if (/Content.Security.Policy|Refused/i.test(m.text())) problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(e.message));

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
    await expect.poll(() => heading(page)).toBe(contact.name);
    const timeline = page.getByRole('region', { name: /Timeline/ });
    await expect.poll(() => timeline.getByRole('listitem').first().textContent()).toContain('Asked for the security review');
    await shoot(page, 'contact');

    // Its list: the list's page names its members, the contact among them.
    const list = (await t.test.get(`/v1/lists/${contact.list_id}`)).json().data;
    await nav(page, 'Lists');
    await page.getByRole('link', { name: list.name }).click();
    const members = page.getByRole('region', { name: /Members/ });
    await expect.poll(() => members.getByRole('heading').textContent()).toBe(`Members (${list.member_count})`);
    if (list.member_count <= 25) expect(await members.getByRole('link', { name: contact.name }).count()).toBe(1);

    // The board: a new deal starts in the first stage, is dragged to Discovery, then refused Proposal,
    // and let in all the same: the move is forced, and recorded so.
    await nav(page, 'Pipeline');
    await expect.poll(() => page.locator('.stage').count()).toBe(6);
    expect(await page.locator('.board').evaluate((board) => board.scrollWidth - board.clientWidth)).toBe(0);
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
    const gate = page.getByRole('region', { name: 'Dashboard pilot can\'t move to Proposal yet' });
    await expect.poll(() => gate.count()).toBe(1);
    const { missing } = (await t.test.patch(`/v1/deals/${deal.id}`, { stage_id: stageId('Proposal') })).json();
    expect(await gate.locator('.missing > li').count()).toBe(missing.length);
    expect((await t.test.get(`/v1/deals/${deal.id}`)).json().data.stage_id).toBe(stageId('Discovery'));
    await gate.getByRole('button', { name: 'Move without it' }).click();
    await expect.poll(() => column('Proposal').locator('.card', { hasText: 'Dashboard pilot' }).count()).toBe(1);
    expect(await gate.count()).toBe(0);
    const forced = (await t.test.get('/v1/events?type=deal.stage_changed&limit=1')).json().data[0];
    expect(forced.data.object).toMatchObject({ id: deal.id, stage_id: stageId('Proposal'), forced: true });

    // Deals: the search says what it searches.
    await nav(page, 'Deals');
    expect(await page.getByLabel('Search deals').getAttribute('placeholder')).toBe('Deal name, owner or source…');

    // Campaigns: each names its audience list; a draft is launched from its button.
    await nav(page, 'Campaigns');
    const draft = (await t.test.get('/v1/campaigns?status=draft')).json().data[0];
    expect(draft).toBeDefined();
    const audience = (await t.test.get(`/v1/lists/${draft.list_id}`)).json().data;
    const draftRow = page.getByRole('row', { name: new RegExp(draft.name) });
    await expect.poll(() => draftRow.getByRole('link').textContent()).toBe(audience.name);
    expect(await draftRow.getByRole('link').getAttribute('href')).toBe(`#/lists/${audience.id}`);
    expect(await page.locator('main').textContent()).not.toContain('lst_');
    await page.getByRole('button', { name: `Launch ${draft.name}` }).click();
    await expect.poll(async () => (await t.test.get(`/v1/campaigns/${draft.id}`)).json().data.status).toBe('active');
    await expect.poll(() => page.getByRole('button', { name: `Launch ${draft.name}` }).count()).toBe(0);
    await shoot(page, 'campaigns');

    // Imports: a small CSV goes onto a list and is followed to its end, with the row it refused.
    const importList = (await t.test.post('/v1/lists', { name: 'Imported from a spreadsheet', type: 'contacts' })).json().data;
    await nav(page, 'Imports');
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
    await nav(page, 'Live events');
    await expect.poll(() => page.locator('.stream').textContent()).toMatch(/connected/);
    await t.test.post('/v1/companies', { name: 'Streamed Industries' });
    const log = page.getByRole('log');
    await expect.poll(() => log.getByRole('listitem').first().textContent(), { timeout: 10_000 }).toContain('Streamed Industries');
    expect(await log.getByRole('listitem').first().locator('.event-type').textContent()).toBe('company.created');
    await shoot(page, 'events');

    // Usage: the month's balance as a chart that says so, with both axes labelled.
    await nav(page, 'Usage');
    const usage = (await t.test.get('/v1/usage')).json().data;
    const month = new Intl.DateTimeFormat('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(usage.period_start * 1000);
    const chart = page.getByRole('img', { name: `Credits left at the end of each day, ${month}` });
    await expect.poll(() => chart.count()).toBe(1);
    expect(await page.getByRole('heading', { name: 'Credit balance at the end of each day' }).count()).toBe(1);
    const axes = chart.locator('text.axis-label');
    expect(await axes.allTextContents()).toEqual([`Day of ${month} (UTC)`, 'Credits left']);
    for (const axis of await axes.all()) expect(await axis.isVisible()).toBe(true);
    await shoot(page, 'usage');

    // Webhooks: the endpoint's delivery of that event, sent again from its Redeliver button.
    await hook.until((got) => got.length === 1);
    await nav(page, 'Webhooks');
    const delivery = page.getByRole('row', { name: /company\.created/ });
    await expect.poll(() => delivery.locator('.state').textContent()).toBe('succeeded');
    await shoot(page, 'webhooks');
    await delivery.getByRole('button', { name: /^Redeliver company\.created/ }).click();
    const [first, again] = await hook.until((got) => got.length === 2);
    expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Sent company.created again.' }).count()).toBe(1);

    // API keys: the expired key says so; a key is created (its token shown once), then revoked, and
    // then refused by the API.
    const asKey = (token: string) => app.inject({ url: '/v1/organization', headers: { authorization: `Bearer ${token}` } });
    await expect.poll(async () => (await asKey(expiring.api_key_token)).statusCode, { timeout: 5_000 }).toBe(401);
    await nav(page, 'API keys');
    await expect.poll(() => page.getByRole('row', { name: /Expired integration/ }).locator('.state').textContent()).toBe('Expired');
    expect(await page.getByRole('row', { name: /Default test key/ }).locator('.state').textContent()).toBe('Active');
    await page.getByLabel('Key name').fill('Temporary integration');
    await page.getByRole('button', { name: 'Create key' }).click();
    const token = await page.getByLabel('New API key token').inputValue();
    expect(token).toMatch(/^svc_test_/);
    expect((await asKey(token)).statusCode).toBe(200);
    await shoot(page, 'api-keys');
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('button', { name: 'Revoke Temporary integration' }).click();
    await page.getByRole('button', { name: 'Confirm revoke' }).click();
    await expect.poll(() => page.getByRole('row', { name: /Temporary integration/ }).count()).toBe(0);
    expect((await asKey(token)).statusCode).toBe(401);

    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows a record in words: labels, dates in the viewer\'s time zone, names for ids, no empty values', async () => {
    const t = await tenant(app);
    const list = (await t.test.get('/v1/lists?type=contacts&limit=1')).json().data[0];
    const contact = (await t.test.post('/v1/contacts', { list_id: list.id, first_name: 'Ada', last_name: 'Lovelace', work_email: 'ada@engines.example', tags: ['vip', 'q4'] })).json().data;
    const { page, problems } = await signedIn(t.test_token);
    await page.goto(`${base}/dashboard#/contacts/${contact.id}`);
    await expect.poll(() => heading(page)).toBe('Ada Lovelace');
    const labels = await page.locator('.fields > dt').allTextContents();
    expect(labels).toEqual(expect.arrayContaining(['First name', 'Last name', 'Work e-mail', 'List', 'Tags', 'Created', 'Updated']));
    expect(labels.filter((label) => /_/.test(label))).toEqual([]);
    // Nothing is said of what the contact lacks: no title, phone or custom fields.
    for (const empty of ['Title', 'Phone', 'Custom fields']) expect(labels).not.toContain(empty);
    await expect.poll(() => detail(page, 'List').textContent()).toBe(list.name);
    expect(await detail(page, 'Created').textContent()).toBe(shown(contact.created_at));
    expect(await detail(page, 'Created').locator('time').getAttribute('datetime')).toBe(new Date(contact.created_at * 1000).toISOString());
    expect(await detail(page, 'Tags').getByRole('listitem').allTextContents()).toEqual(['vip', 'q4']);
    const text = await page.locator('main').textContent();
    expect(text).not.toMatch(/\[\]|\{\}|null/);
    expect(text).not.toContain(String(contact.created_at));

    // A deal: its stage and pipeline by name, money in its currency, a calendar day as a date.
    const deal = (await t.test.post('/v1/deals', { name: 'Engines – 50 seats', amount: 4_500_000, expected_close_date: '2030-03-31' })).json().data;
    const pipeline = (await t.test.get(`/v1/deals/pipelines/${deal.pipeline_id}`)).json().data;
    await page.goto(`${base}/dashboard#/deals/${deal.id}`);
    await expect.poll(() => heading(page)).toBe(deal.name);
    await expect.poll(() => detail(page, 'Stage').textContent()).toBe(pipeline.stages[0].name);
    await expect.poll(() => detail(page, 'Pipeline').textContent()).toBe(pipeline.name);
    expect(await detail(page, 'Amount').textContent()).toBe('$45,000.00');
    expect(await detail(page, 'Expected to close').textContent()).toBe('Mar 31, 2030');
    expect(await detail(page, 'Probability').textContent()).toBe(`${deal.probability}%`);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('fits the six stages at 1400 px, scrolls visibly when more do not fit, and records missing evidence from the board', async () => {
    const t = await tenant(app);
    const pipeline = (await t.test.get('/v1/deals/pipelines')).json().data.find((p: { is_default: boolean }) => p.is_default);
    const stageId = (name: string) => pipeline.stages.find((s: { name: string }) => s.name === name).id;
    const deal = (await t.test.post('/v1/deals', { name: 'Evidence pilot', amount: 500_000, stage_id: stageId('Discovery') })).json().data;
    const refused = await t.test.patch(`/v1/deals/${deal.id}`, { stage_id: stageId('Proposal') });
    expect(refused.statusCode).toBe(409);
    const { missing } = refused.json() as { missing: string[] };
    const library = new Map((await t.test.get('/v1/pipelines/evidence-library')).json().data.map((k: { key: string; title: string }) => [k.key, k.title]));
    const titles = missing.map((key) => library.get(key) as string);
    const steps = await t.test.post('/v1/deals/pipelines', { name: 'Enterprise, ten steps', stages: Array.from({ length: 10 }, (_, i) => ({ name: `Step ${i + 1}` })) });
    expect(steps.statusCode).toBe(201);

    const { page, problems } = await signedIn(t.test_token);
    await page.setViewportSize({ width: 1400, height: 900 });
    await nav(page, 'Pipeline');
    await expect.poll(() => page.locator('.stage').count()).toBe(6);
    // Every column is wholly inside the board, and the board inside the window: nothing is cut off.
    const board = page.locator('.board');
    const measure = () => board.evaluate((element) => ({
      overflow: element.scrollWidth - element.clientWidth,
      lastRight: element.lastElementChild!.getBoundingClientRect().right,
      right: Math.min(element.getBoundingClientRect().right, element.ownerDocument.documentElement.clientWidth),
    }));
    const fit = await measure();
    expect(fit.overflow).toBe(0);
    expect(fit.lastRight).toBeLessThanOrEqual(fit.right);
    expect(await page.getByText(/stages are out of view/).count()).toBe(0);

    // Ten stages do not fit: the board says how many are out of view, and scrolls to them.
    await page.getByLabel('Pipeline', { exact: true }).selectOption({ label: 'Enterprise, ten steps' });
    await expect.poll(() => page.locator('.stage').count()).toBe(10);
    await expect.poll(() => page.getByText(/of 10 stages are out of view: scroll the board sideways/).isVisible()).toBe(true);
    await board.evaluate((element) => element.scrollTo({ left: element.scrollWidth }));
    await expect.poll(async () => { const m = await measure(); return m.lastRight <= m.right; }).toBe(true);

    // The stage that needs evidence says so in words, and the form records it and moves the deal.
    await page.getByLabel('Pipeline', { exact: true }).selectOption({ label: pipeline.name });
    await page.getByLabel('Move Evidence pilot to').selectOption({ label: 'Move to Proposal' });
    const gate = page.getByRole('region', { name: 'Evidence pilot can\'t move to Proposal yet' });
    await expect.poll(() => gate.locator('.missing strong').allTextContents()).toEqual(titles);
    const said = await gate.textContent();
    expect(said).not.toMatch(/POST|\/v1\/|force|stg_|\{id\}/);
    for (const key of missing) expect(said).not.toContain(key);
    for (const [i, title] of titles.entries()) await gate.getByLabel(`${title}: What you learned`).fill(`Heard it on call ${i + 1}`);
    await gate.getByLabel(`${titles[0]}: Where from`).fill('call');
    await shoot(page, 'pipeline');
    await gate.getByRole('button', { name: 'Record and move to Proposal' }).click();
    const proposal = page.getByRole('region', { name: 'Stage Proposal' });
    await expect.poll(() => proposal.locator('.card', { hasText: 'Evidence pilot' }).count()).toBe(1);
    expect(await gate.count()).toBe(0);
    expect(await page.getByRole('status').filter({ hasText: 'Moved Evidence pilot to Proposal.' }).count()).toBe(1);
    const { evidence } = (await t.test.get(`/v1/deals/${deal.id}/checklist`)).json().data;
    expect(evidence.map((e: { key: string; note: string }) => [e.key, e.note])).toEqual(expect.arrayContaining(missing.map((key, i) => [key, `Heard it on call ${i + 1}`])));
    expect(evidence.find((e: { key: string }) => e.key === missing[0]).source).toBe('call');
    const moved = (await t.test.get('/v1/events?type=deal.stage_changed&limit=1')).json().data[0];
    expect(moved.data.object).toMatchObject({ id: deal.id, stage_id: stageId('Proposal') });
    expect(moved.data.object.forced).not.toBe(true);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('lists, filters, searches and creates tasks, notes and products, and acts on them', { timeout: 60_000 }, async () => {
    const t = await tenant(app);
    const task = (await t.test.post('/v1/tasks', { title: 'Send the pilot contract', type: 'email', priority: 3, due_at: now() + 86_400, assignee: 'ada@example.com' })).json().data;
    const note = (await t.test.post('/v1/notes', { content: 'Budget approved by the CFO on the call', pinned: true })).json().data;
    const product = (await t.test.post('/v1/products', { name: 'Analytics add-on', sku: 'ANALYTICS-Y', unit_price: 125_000 })).json().data;
    const contact = (await t.test.get('/v1/contacts?limit=1')).json().data[0];
    const { page, problems } = await signedIn(t.test_token);
    const row = (name: string) => page.getByRole('row', { name: new RegExp(name) });
    const total = () => page.locator('.pager span').textContent();

    // Tasks: the one made through the API, by filter and by search (with a filter too); one made here.
    await nav(page, 'Tasks');
    await expect.poll(() => row(task.title).locator('td').allTextContents()).toEqual(['E-mail', 'open', 'High', shown(task.due_at), 'ada@example.com', shown(task.created_at)]);
    await page.getByLabel('Status').selectOption({ label: 'Overdue' });
    const overdue = (await t.test.get('/v1/tasks?status=overdue')).json().pagination.total;
    await expect.poll(total).toBe(`Page 1 · ${overdue} in all`);
    expect(await row(task.title).count()).toBe(0);
    await page.getByLabel('Search tasks').fill('contract');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => page.getByRole('cell', { name: 'Nothing found.' }).count()).toBe(1);
    await page.getByLabel('Status').selectOption({ label: 'Open' });
    await expect.poll(total).toBe('Page 1 · 1 in all');
    expect(await row(task.title).count()).toBe(1);
    await shoot(page, 'tasks');
    await page.getByText('New task').click();
    const newTask = page.getByRole('form', { name: 'New task' });
    await newTask.getByLabel('Title').fill('Call Ada about the evidence');
    await newTask.getByLabel('Type').selectOption({ label: 'Call' });
    await newTask.getByLabel('Priority').selectOption({ label: 'Urgent' });
    await newTask.getByLabel('Due').fill('2030-01-02T09:30');
    await newTask.getByRole('button', { name: 'Create task' }).click();
    await expect.poll(() => heading(page)).toBe('Call Ada about the evidence');
    const made = (await t.test.get('/v1/tasks?search=evidence')).json().data[0];
    // 09:30 in Kolkata (UTC+5:30) is 04:00 UTC.
    expect(made).toMatchObject({ type: 'call', priority: 4, status: 'open', due_at: Date.UTC(2030, 0, 2, 4, 0) / 1000 });
    expect(await detail(page, 'Due').textContent()).toBe('Jan 2, 2030, 9:30 AM');
    await page.getByRole('button', { name: 'Mark completed' }).click();
    await expect.poll(async () => (await t.test.get(`/v1/tasks/${made.id}`)).json().data.status).toBe('completed');
    await expect.poll(() => page.getByRole('button', { name: 'Reopen' }).count()).toBe(1);

    // Notes: pinned or not, searched by their words; one written here, then pinned.
    await nav(page, 'Notes');
    await expect.poll(() => row('Budget approved by the CFO').count()).toBe(1);
    await page.getByLabel('Pinned').selectOption({ label: 'Not pinned' });
    await expect.poll(total).toBe(`Page 1 · ${(await t.test.get('/v1/notes?pinned=false')).json().pagination.total} in all`);
    expect(await row('Budget approved by the CFO').count()).toBe(0);
    await page.getByLabel('Pinned').selectOption({ label: 'All' });
    await page.getByLabel('Search notes').fill('CFO');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(total).toBe('Page 1 · 1 in all');
    expect(await row('Budget approved by the CFO').getByRole('link').getAttribute('href')).toBe(`#/notes/${note.id}`);
    await page.getByText('New note').click();
    const newNote = page.getByRole('form', { name: 'New note' });
    await newNote.getByLabel(/^Note/).fill('Prefers e-mail to calls.\nAsk for the IT contact.');
    await newNote.getByLabel('Written by').fill('grace@example.com');
    await pick(page, newNote.getByLabel('About a contact'), contact.name);
    await newNote.getByRole('button', { name: 'Create note' }).click();
    await expect.poll(() => heading(page)).toBe('Prefers e-mail to calls.');
    expect(await detail(page, 'Note').textContent()).toBe('Prefers e-mail to calls.\nAsk for the IT contact.');
    await expect.poll(() => detail(page, 'Contacts').textContent()).toBe(contact.name);
    await page.getByRole('button', { name: 'Pin', exact: true }).click();
    const written = (await t.test.get('/v1/notes?created_by=grace%40example.com')).json().data[0];
    expect(written.associations.contact_ids).toEqual([contact.id]);
    await expect.poll(async () => (await t.test.get(`/v1/notes/${written.id}`)).json().data.pinned).toBe(true);
    await shoot(page, 'note');

    // Products: price in its currency, active or not; one made here, then deactivated.
    await nav(page, 'Products');
    await expect.poll(() => row('Analytics add-on').locator('td').allTextContents()).toEqual(['ANALYTICS-Y', '$1,250.00', 'Yes', shown(product.created_at)]);
    await page.getByLabel('Availability').selectOption({ label: 'Inactive' });
    await expect.poll(() => row('Analytics add-on').count()).toBe(0);
    await page.getByLabel('Availability').selectOption({ label: 'All' });
    await page.getByLabel('Search products').fill('analytics');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(total).toBe('Page 1 · 1 in all');
    await shoot(page, 'products');
    await page.getByText('New product').click();
    const newProduct = page.getByRole('form', { name: 'New product' });
    await newProduct.getByLabel('Name').fill('Premium support');
    await newProduct.getByLabel('SKU').fill('SUPPORT-PREMIUM');
    await newProduct.getByLabel('Unit price').fill('49.50');
    await newProduct.getByRole('button', { name: 'Create product' }).click();
    await expect.poll(() => heading(page)).toBe('Premium support');
    const support = (await t.test.get('/v1/products?sku=SUPPORT-PREMIUM')).json().data[0];
    expect(support).toMatchObject({ unit_price: 4950, currency: 'USD', active: true });
    expect(await detail(page, 'Unit price').textContent()).toBe('$49.50');
    await page.getByRole('button', { name: 'Deactivate' }).click();
    await expect.poll(async () => (await t.test.get(`/v1/products/${support.id}`)).json().data.active).toBe(false);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows a quote\'s status, lines and totals, adds a line, sends it, and makes a quote for a contact', { timeout: 60_000 }, async () => {
    const t = await tenant(app);
    const contact = (await t.test.get('/v1/contacts?limit=1')).json().data[0];
    const product = (await t.test.post('/v1/products', { name: 'Team plan seat', unit_price: 12_000 })).json().data;
    const quote = (await t.test.post('/v1/quotes', {
      title: 'Pilot for the data team', contact_id: contact.id, tax_percent: 10,
      line_items: [{ product_id: product.id, quantity: 25 }, { name: 'Onboarding workshop', unit_price: 150_000, discount_percent: 50 }],
    })).json().data;
    const { page, problems } = await signedIn(t.test_token);

    await nav(page, 'Quotes');
    const listed = page.getByRole('row', { name: new RegExp(quote.number) });
    await expect.poll(() => listed.locator('td').allTextContents()).toEqual([quote.title, 'draft', dollars(quote.total), contact.name, '—', shown(quote.created_at)]);
    await page.getByLabel('Status').selectOption({ label: 'Sent' });
    await expect.poll(() => listed.count()).toBe(0);
    await page.getByLabel('Status').selectOption({ label: 'Draft' });
    await expect.poll(() => listed.count()).toBe(1);
    await listed.getByRole('link', { name: quote.number }).click();

    // Its page: the state, each line, the totals the service computed, the contact by name.
    await expect.poll(() => heading(page)).toBe(`${quote.number} · ${quote.title}`);
    const lines = page.getByRole('table', { name: 'Lines' });
    await expect.poll(() => lines.locator('tbody th').allTextContents()).toEqual(['Team plan seat', 'Onboarding workshop']);
    const totals = async () => Object.fromEntries((await lines.locator('tfoot tr').allInnerTexts()).map((r) => r.split('\t')));
    expect(await totals()).toEqual({ Subtotal: dollars(quote.subtotal), Discount: dollars(quote.discount_total), 'Tax (10%)': dollars(quote.tax_total), Total: dollars(quote.total) });
    await expect.poll(() => detail(page, 'Contact').textContent()).toBe(contact.name);
    expect(await page.locator('#quote-title .state').textContent()).toBe('draft');

    // A line of its own, added here: the totals follow the service's.
    await page.getByLabel('Name', { exact: true }).fill('Custom connector');
    await page.getByLabel('Quantity').fill('2');
    await page.getByLabel(/^Unit price/).fill('300');
    await page.getByRole('button', { name: 'Add line' }).click();
    await expect.poll(() => lines.locator('tbody th').count()).toBe(3);
    const edited = (await t.test.get(`/v1/quotes/${quote.id}`)).json().data;
    expect(edited.line_items[2]).toMatchObject({ product_id: null, name: 'Custom connector', quantity: 2, unit_price: 30_000, total: 60_000 });
    await expect.poll(totals).toEqual({ Subtotal: dollars(edited.subtotal), Discount: dollars(edited.discount_total), 'Tax (10%)': dollars(edited.tax_total), Total: dollars(edited.total) });

    // Sent: the public link is shown this once, and opens the quote.
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.locator('#quote-title .state').textContent()).toBe('sent');
    expect((await t.test.get(`/v1/quotes/${quote.id}`)).json().data.status).toBe('sent');
    const link = await page.getByLabel('Public link of the quote').inputValue();
    expect(link).toMatch(new RegExp(`^${base}/q/[\\w-]{43}$`));
    expect((await fetch(link.replace('/q/', '/v1/public/quotes/'))).status).toBe(200);
    expect(await page.getByRole('button', { name: 'Add line' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Void' }).count()).toBe(1);
    await shoot(page, 'quote');

    // A new quote, to a contact picked by name.
    await nav(page, 'Quotes');
    await shoot(page, 'quotes');
    await page.getByText('New quote').click();
    const newQuote = page.getByRole('form', { name: 'New quote' });
    await newQuote.getByLabel('Title').fill('Renewal for the data team');
    await pick(page, newQuote.getByLabel('Contact'), contact.name);
    await newQuote.getByRole('button', { name: 'Create quote' }).click();
    await expect.poll(() => heading(page)).toMatch(/^Q-\d{4} · Renewal for the data team$/);
    const renewal = (await t.test.get('/v1/quotes?title=Renewal')).json().data[0];
    expect(renewal).toMatchObject({ status: 'draft', contact_id: expect.any(String) });
    expect((await t.test.get(`/v1/contacts/${renewal.contact_id}`)).json().data.name).toBe(contact.name);
    expect(await page.getByText('Add a line before sending.').count()).toBe(1);
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
