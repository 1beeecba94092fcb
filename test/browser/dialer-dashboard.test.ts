// The dashboard's dialer screen in a real headless browser (the run's Chromium, playwright-core): an
// agent opens a paused session from the list, runs it, and sees the call the local driver connects
// (a number ending in 8: answered after 2 s, 5 s talked) with the contact and the script filled in
// with the contact's fields; once the call has ended, the agent records its disposition with notes
// (checked through the API) and the session completes. No Content-Security-Policy violation and no
// page error may occur.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp } from '../helpers/app.ts';
import { browserAvailable, browserContext, signedIn } from '../helpers/browser.ts';
import { ok } from '../helpers/records.ts';
import { waitFor } from '../helpers/wait.ts';

describe.skipIf(!browserAvailable)('the dialer screen of the dashboard in a browser', () => {
  let app: FastifyInstance;
  let base = '';
  let browser: BrowserContext;

  beforeAll(async () => {
    app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_PER_MINUTE: '100000' } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    browser = await browserContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();

  it('runs a session, shows the connected call with its contact and script, and records its disposition', { timeout: 120_000 }, async () => {
    const t = await tenant(app, { sandbox: false });
    const c = t.test;
    const member = await ok(c.post('/v1/members', { name: 'Ada Agent', email: 'ada@dialer.test' }), 201);
    const agent = await ok(c.post('/v1/voice/agents', { member_id: member.id, status: 'available' }), 201);
    const number = await ok(c.post('/v1/voice/numbers', { phone_number: '+14155550100' }), 201);
    const list = await ok(c.post('/v1/lists', { name: 'Call today', type: 'contacts' }), 201);
    await ok(c.post('/v1/contacts', { list_id: list.id, first_name: 'Grace', last_name: 'Hopper', phone: '+44 20 7946 0998', timezone: 'UTC' }), 201);
    const session = await ok(c.post('/v1/voice/dialer/sessions', {
      list_id: list.id, agent_id: agent.id, number_id: number.id, calling_window: { start_hour: 0, end_hour: 24, timezone: 'UTC' }, script: 'Hi {{ first_name }}, this is Ada from Acme.',
    }), 201);

    const { page, problems } = await signedIn(browser, base, t.test_token);
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Dialer', exact: true }).click();
    await expect.poll(() => heading(page)).toBe('Dialer');
    await page.getByRole('link', { name: session.id }).click();
    await expect.poll(() => heading(page)).toBe('Dialer session');
    await expect.poll(() => page.getByText('No call is connected: the session is paused.').count()).toBe(1);

    await page.getByRole('button', { name: 'Run', exact: true }).click();
    const current = page.getByRole('region', { name: 'Current call' });
    await expect.poll(() => current.textContent(), { timeout: 20_000 }).toContain('Grace Hopper');
    expect(await current.textContent()).toContain('+442079460998');
    expect(await current.textContent()).toContain('Hi Grace, this is Ada from Acme.');

    // The call ends: its disposition is asked for.
    const form = page.getByRole('form', { name: /Disposition of the call/ });
    await expect.poll(() => form.count(), { timeout: 30_000 }).toBe(1);
    await form.getByLabel('Disposition').selectOption('meeting_booked');
    await form.getByLabel('Notes').fill('Demo on Tuesday');
    await form.getByRole('button', { name: 'Save disposition' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Recorded meeting booked');
    const [call] = await waitFor(async () => (await ok(c.get(`/v1/voice/calls?session_id=${session.id}`))) as unknown as Array<Record<string, unknown>>, (calls) => calls[0]?.disposition === 'meeting_booked');
    expect(call).toMatchObject({ status: 'completed', disposition: 'meeting_booked', notes: 'Demo on Tuesday' });
    await waitFor(() => ok(c.get(`/v1/voice/dialer/sessions/${session.id}`)), (s) => s.status === 'completed');
    expect(problems).toEqual([]);
  });
});
