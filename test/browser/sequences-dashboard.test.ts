// The dashboard's sequence screens in a real headless browser (the run's Chromium, playwright-core),
// in one session: the sequences table with each one's counts (the sandbox's and one made through the
// API), filtered by status; a sequence run from its page, followed until it is live; its steps with
// their analytics once the local driver has sent the first step and the file's clock has made the
// scheduler send the second; an enrollment paused from the page and another resumed from its
// contact's page (both checked through the API); and the sequence paused, resumed and terminated
// from its page, which follows each background job to its end. No Content-Security-Policy violation
// and no page error may occur.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clock, tenant, testApp, type Client } from '../helpers/app.ts';
import { browserAvailable, browserContext, signedIn } from '../helpers/browser.ts';
import { ok, type Json } from '../helpers/records.ts';
import { waitFor } from '../helpers/wait.ts';

const ALL_DAY = { timezone: 'UTC', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start_hour: 0, end_hour: 24 };
const FOLLOW_UP = 2 * 86_400;

describe.skipIf(!browserAvailable)('the sequence screens of the dashboard in a browser', () => {
  let app: FastifyInstance;
  let base = '';
  let browser: BrowserContext;

  beforeAll(async () => {
    app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_PER_MINUTE: '100000' } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    browser = await browserContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US', timezoneId: 'Asia/Kolkata' });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();
  const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name, exact: true }).click();
  /** The texts of a table row's cells, header cell first. */
  const cells = (row: Locator) => row.locator('th, td').allTextContents();
  /** The row of `table` whose header cell links `name`. */
  const rowOf = (table: Locator, name: string) => table.locator('tbody tr').filter({ has: table.page().getByRole('link', { name, exact: true }) });
  const get = (c: Client, path: string) => ok(c.get(path));
  /** The sequence's messages the local driver has taken, once there are `n`. */
  const sent = (c: Client, id: string, n: number) => waitFor(async () => (await get(c, `/v1/outbox?record_id=${id}&limit=100`) as unknown as Json[]).filter((m) => m.status !== 'queued'), (m) => m.length >= n);

  it('lists sequences with their counts, runs one, shows its steps\' analytics and moves its enrollments', { timeout: 120_000 }, async () => {
    const t = await tenant(app);
    const c = t.test;
    const sandbox = (await get(c, '/v1/sequences?search=Founder')) as unknown as Json[];
    expect(sandbox.map((s) => [s.name, s.status, s.counts])).toEqual([['Founder outreach', 'live', { enrolled: 6, active: 4, finished: 2, replied: 1, bounced: 0 }]]);

    // A sequence of three e-mails from a mailbox of the test mode (the local driver sends at once), sent at any hour, three contacts enrolled.
    const mailbox = await ok(c.post('/v1/mailboxes', { email: 'ada@pilot.test', display_name: 'Ada' }), 201);
    const list = await ok(c.post('/v1/lists', { name: 'Pilot', type: 'contacts' }), 201);
    const people = [['Grace', 'Hopper'], ['Alan', 'Turing'], ['Edsger', 'Dijkstra']];
    const contacts: Json[] = [];
    for (const [first, last] of people) contacts.push(await ok(c.post('/v1/contacts', { list_id: list.id, first_name: first, last_name: last, work_email: `${first.toLowerCase()}@pilot.test` }), 201));
    const [grace, alan, edsger] = contacts;
    const seq = await ok(c.post('/v1/sequences', { name: 'Pilot follow-up', mailbox_ids: [mailbox.id], schedule: ALL_DAY }), 201);
    await ok(c.post(`/v1/sequences/${seq.id}/steps`, { subject: 'A pilot, {{ contact.first_name }}?', body: 'Shall we try it for a month? {{ unsubscribe_url }}' }), 201);
    await ok(c.post(`/v1/sequences/${seq.id}/steps`, { time_interval: FOLLOW_UP, body: 'Following up, {{ first_name }}.' }), 201);
    await ok(c.post(`/v1/sequences/${seq.id}/steps`, { time_interval: FOLLOW_UP, body: 'One last note, {{ first_name }}.' }), 201);
    await ok(c.post(`/v1/sequences/${seq.id}/enrollments`, { contact_ids: contacts.map((x) => x.id) }), 201);

    const { page, problems } = await signedIn(browser, base, t.test_token);

    // The table: each sequence with its status and counts; the status filter and the search by name.
    await nav(page, 'Sequences');
    await expect.poll(() => heading(page)).toBe('Sequences');
    const table = page.getByRole('table').first();
    await expect.poll(async () => (await cells(rowOf(table, 'Founder outreach'))).slice(0, 7)).toEqual(['Founder outreach', 'live', '6', '4', '2', '1', '0']);
    expect((await cells(rowOf(table, 'Pilot follow-up'))).slice(0, 7)).toEqual(['Pilot follow-up', 'drafted', '3', '3', '0', '0', '0']);
    await page.getByLabel('Status').selectOption('live');
    await expect.poll(async () => (await table.locator('tbody tr th').allTextContents())).toEqual(['Founder outreach']);
    await page.getByLabel('Status').selectOption('completed');
    await expect.poll(() => table.locator('tbody').textContent()).toBe('Nothing found.');
    await page.getByLabel('Status').selectOption('drafted');
    await expect.poll(async () => (await table.locator('tbody tr th').allTextContents())).toEqual(['Pilot follow-up']);
    await page.getByLabel('Search sequences').fill('pilot');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(async () => (await table.locator('tbody tr th').allTextContents())).toEqual(['Pilot follow-up']);

    // Its page: drafted, it can only be run; its steps in order, nothing sent yet.
    await page.getByRole('link', { name: 'Pilot follow-up' }).click();
    await expect.poll(() => heading(page), { timeout: 20_000 }).toBe('Pilot follow-up');
    const lifecycle = page.getByRole('region', { name: 'Sequence', exact: true });
    const status = () => lifecycle.locator('.state').first().textContent();
    const buttons = () => lifecycle.getByRole('button').allTextContents();
    expect(await status()).toBe('drafted');
    expect(await buttons()).toEqual(['Run', 'Refresh']);
    const steps = page.getByRole('table', { name: 'Steps and their analytics' }).locator('tbody tr');
    await expect.poll(() => steps.count()).toBe(3);
    expect(await cells(steps.nth(0))).toEqual(['1', 'E-mail', 'None', 'A pilot, {{ contact.first_name }}?', '0', '0', '0', '0', '0', '0', '0']);
    expect(await cells(steps.nth(1))).toEqual(['2', 'E-mail', '2 days', 'Re: the first e-mail', '0', '0', '0', '0', '0', '0', '0']);
    expect((await cells(steps.nth(2))).slice(0, 5)).toEqual(['3', 'E-mail', '2 days', 'Re: the first e-mail', '0']);
    const enrollments = page.getByRole('table', { name: 'Enrollments' });
    await expect.poll(() => enrollments.locator('tbody tr').count()).toBe(3);
    expect((await cells(rowOf(enrollments, 'Grace Hopper'))).slice(0, 4)).toEqual(['Grace Hopper', 'active', '—', 'Step 1']);

    // Run: scheduling, followed by the page until it is live; then it can be paused or terminated.
    await lifecycle.getByRole('button', { name: 'Run' }).click();
    await expect.poll(() => lifecycle.getByRole('status').textContent()).toBe('Running: its enrollments are being scheduled.');
    await expect.poll(status, { timeout: 30_000 }).toBe('live');
    await expect.poll(() => lifecycle.getByRole('status').textContent()).toBe('Done: the sequence is live.');
    expect(await buttons()).toEqual(['Pause', 'Terminate', 'Refresh']);
    expect((await get(c, `/v1/sequences/${seq.id}`)).status).toBe('live');

    // The first step goes to all three; Grace opens hers, Alan replies (which finishes his enrollment).
    const firsts = await sent(c, seq.id, 3);
    const to = (contact: Json) => firsts.find((m) => m.to_addresses[0] === contact.work_email)!;
    await ok(c.post(`/v1/outbox/${to(grace).id}/simulate`, { outcome: 'opened' }));
    await ok(c.post(`/v1/outbox/${to(alan).id}/simulate`, { outcome: 'replied' }));

    // Grace's enrollment paused from the page (the page reads its steps done since it was sent).
    await lifecycle.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(async () => (await cells(rowOf(enrollments, 'Grace Hopper'))).slice(0, 4)).toEqual(['Grace Hopper', 'active', '—', 'Step 2']);
    await rowOf(enrollments, 'Grace Hopper').getByRole('button', { name: 'Pause' }).click();
    await expect.poll(async () => (await cells(rowOf(enrollments, 'Grace Hopper')))[1]).toBe('paused');
    const graceEnrollment = (await get(c, `/v1/contacts/${grace.id}/enrollments`))[0];
    expect(graceEnrollment).toMatchObject({ sequence_id: seq.id, status: 'paused', step_index: 1 });
    expect((await cells(rowOf(enrollments, 'Alan Turing'))).slice(0, 4)).toEqual(['Alan Turing', 'finished', 'replied', '1 done']);

    // Two days on, the scheduler sends the follow-up to Edsger alone: Grace is paused, Alan finished.
    clock.advance(FOLLOW_UP + 60);
    const all = await sent(c, seq.id, 4);
    expect(all.filter((m) => m.step_id !== to(grace).step_id).map((m) => m.to_addresses[0])).toEqual([edsger.work_email]);

    // The steps' analytics on the page are the API's, and the counts follow the enrollments.
    await lifecycle.getByRole('button', { name: 'Refresh' }).click();
    const analytics = (await get(c, `/v1/sequences/${seq.id}/analytics`)).steps as Json[];
    expect(analytics.map((a) => [a.sent, a.delivered, a.opened, a.replied])).toEqual([[3, 3, expect.any(Number), 1], [1, 1, 0, 0], [0, 0, 0, 0]]);
    expect(analytics[0].opened).toBeGreaterThanOrEqual(1);
    const numbers = (a: Json) => ['sent', 'delivered', 'opened', 'clicked', 'replied', 'bounced', 'unsubscribed'].map((k) => String(a[k]));
    await expect.poll(async () => (await cells(steps.nth(1))).slice(4)).toEqual(numbers(analytics[1]));
    expect((await cells(steps.nth(0))).slice(4)).toEqual(numbers(analytics[0]));
    expect((await cells(steps.nth(2))).slice(4)).toEqual(numbers(analytics[2]));
    expect(await lifecycle.locator('.stats dd').allTextContents()).toEqual(['3', '2', '1', '1', '0']);
    expect((await cells(rowOf(enrollments, 'Edsger Dijkstra'))).slice(0, 4)).toEqual(['Edsger Dijkstra', 'active', '—', 'Step 3']);

    // The filter of the enrollments: the paused one alone.
    await page.getByLabel('Enrollment status').selectOption('paused');
    await expect.poll(() => enrollments.locator('tbody tr').count()).toBe(1);
    expect((await cells(enrollments.locator('tbody tr')))[0]).toBe('Grace Hopper');

    // Grace's page: her enrollment in the sequence, resumed from there.
    await page.getByRole('link', { name: 'Grace Hopper' }).click();
    await expect.poll(() => heading(page), { timeout: 20_000 }).toBe('Grace Hopper');
    const hers = page.getByRole('table', { name: 'Enrollments' });
    await expect.poll(async () => (await cells(rowOf(hers, 'Pilot follow-up'))).slice(0, 4)).toEqual(['Pilot follow-up', 'paused', '—', 'Step 2']);
    expect(await hers.locator('tbody tr').count()).toBe(1);
    await rowOf(hers, 'Pilot follow-up').getByRole('button', { name: 'Resume' }).click();
    await expect.poll(async () => (await cells(rowOf(hers, 'Pilot follow-up')))[1]).toBe('active');
    expect((await get(c, `/v1/enrollments/${graceEnrollment.id}`)).status).toBe('active');

    // Back on the sequence: paused, resumed and terminated, each followed until its job is done.
    await rowOf(hers, 'Pilot follow-up').getByRole('link', { name: 'Pilot follow-up' }).click();
    await expect.poll(() => heading(page), { timeout: 20_000 }).toBe('Pilot follow-up');
    await lifecycle.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(status, { timeout: 30_000 }).toBe('paused');
    expect(await buttons()).toEqual(['Resume', 'Terminate', 'Refresh']);
    await lifecycle.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(status, { timeout: 30_000 }).toBe('live');
    await lifecycle.getByRole('button', { name: 'Terminate' }).click();
    await lifecycle.getByRole('button', { name: 'Confirm terminate' }).click();
    await expect.poll(status, { timeout: 30_000 }).toBe('completed');
    expect(await buttons()).toEqual(['Refresh']);
    const finished = (await get(c, `/v1/sequences/${seq.id}/enrollments`)) as unknown as Json[];
    expect(Object.fromEntries(finished.map((e) => [e.contact_id, [e.status, e.reason]]))).toEqual({
      [grace.id]: ['finished', 'terminated'], [alan.id]: ['finished', 'replied'], [edsger.id]: ['finished', 'terminated'],
    });
    await expect.poll(async () => (await cells(rowOf(enrollments, 'Edsger Dijkstra'))).slice(0, 3)).toEqual(['Edsger Dijkstra', 'finished', 'terminated']);
    expect(await lifecycle.locator('.stats dd').allTextContents()).toEqual(['3', '0', '3', '1', '0']);

    expect(problems).toEqual([]);
    await page.close();
  });
});
