// The SDK against the running service on a real socket: every group's calls, auto-pagination, typed
// errors, retries (one record after a real 429), the live event stream with resume, and webhook
// verification of a real delivery.
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError, AuthenticationError, BadRequestError, ConflictError, IdempotencyConflictError, NotFoundError, PermissionError, ProviderNotConfiguredError,
  RateLimitError, RevenueClient, ServiceUnavailableError, ValidationError, verifyWebhook, WebhookVerificationError, type Contact, type ErrorType, type Event,
} from '../../sdk/src/index.ts';
import { newOrg, testApp } from '../helpers/app.ts';
import { receiver } from '../helpers/receiver.ts';
import { waitFor } from '../helpers/wait.ts';

const UNLIMITED = { RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_SECOND: '1000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' };

let app: FastifyInstance;
let baseUrl: string;

async function listening(env: Record<string, string>): Promise<{ app: FastifyInstance; baseUrl: string }> {
  const a = await testApp({ env });
  await a.listen({ port: 0, host: '127.0.0.1' });
  return { app: a, baseUrl: `http://127.0.0.1:${(a.server.address() as AddressInfo).port}` };
}

const stop = (a: FastifyInstance): Promise<void> => a.close();

beforeAll(async () => {
  ({ app, baseUrl } = await listening(UNLIMITED));
});
afterAll(() => stop(app));

async function fresh(options: { maxRetries?: number; fetch?: typeof fetch } = {}) {
  const org = await newOrg(app);
  return { org, sdk: new RevenueClient({ apiKey: org.live_token, baseUrl, ...options }) };
}

describe('every group', () => {
  it('contacts, companies, lists (members, entries), search', async () => {
    const { sdk } = await fresh();
    const list = (await sdk.lists.create({ name: 'Leads', type: 'contacts' })).data;
    const contact = (await sdk.contacts.create({ list_id: list.id, name: 'Ada Lovelace', work_email: 'ada@example.com', title: 'CTO' })).data;
    expect(contact.id).toMatch(/^[a-z]+_/);
    expect((await sdk.contacts.get(contact.id)).data.name).toBe('Ada Lovelace');
    expect((await sdk.contacts.update(contact.id, { title: 'VP Engineering' })).data.title).toBe('VP Engineering');
    const asserted = await sdk.contacts.assert({ list_id: list.id, work_email: 'ada@example.com', name: 'Ada L.' });
    expect(asserted.data.id).toBe(contact.id);
    expect((await sdk.contacts.list({ title: 'VP' })).data.map((c) => c.id)).toEqual([contact.id]);
    expect((await sdk.contacts.search({ filters: [{ field: 'name', operator: 'contains', value: 'Ada' }] })).data.map((c) => c.id)).toEqual([contact.id]);
    expect((await sdk.contacts.search({ filters: [{ field: 'name', operator: 'contains', value: 'Babbage' }] })).data).toEqual([]);
    expect((await sdk.contacts.timeline(contact.id)).data.length).toBeGreaterThan(0);

    const company = (await sdk.companies.create({ name: 'Analytical Engines Ltd' })).data;
    expect((await sdk.companies.get(company.id)).data.name).toBe('Analytical Engines Ltd');
    await sdk.companies.update(company.id, { name: 'Analytical Engines' });
    expect((await sdk.companies.list()).data).toHaveLength(1);

    expect((await sdk.lists.get(list.id)).data.name).toBe('Leads');
    await sdk.lists.update(list.id, { name: 'Warm leads' });
    const accounts = (await sdk.lists.create({ name: 'Target accounts', type: 'companies' })).data;
    await sdk.lists.members.add(accounts.id, { ids: [company.id] });
    expect((await sdk.lists.members.list(accounts.id)).data.map((m) => m.id)).toContain(company.id);
    await sdk.lists.members.remove(accounts.id, company.id);
    const dnc = (await sdk.lists.create({ name: 'Do not contact', type: 'suppressions' })).data;
    await sdk.lists.entries.add(dnc.id, { values: ['blocked@example.com'] });
    const entries = (await sdk.lists.entries.list(dnc.id)).data;
    expect(entries).toHaveLength(1);
    await sdk.lists.entries.remove(dnc.id, entries[0].id);

    expect((await sdk.search.all({ q: 'Analytical' })).data.companies?.data.map((c) => c.id)).toEqual([company.id]);
    expect((await sdk.search.companies({})).data.map((c) => c.id)).toEqual([company.id]);

    await sdk.contacts.delete(contact.id);
    await sdk.companies.delete(company.id);
    await expect(sdk.contacts.get(contact.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('deals (pipelines, contacts, summary, stage history), checklist pipelines, tasks, notes', async () => {
    const { sdk } = await fresh();
    const pipeline = (await sdk.deals.pipelines.create({ name: 'Sales', stages: [{ name: 'Lead' }, { name: 'Won' }] } as Parameters<typeof sdk.deals.pipelines.create>[0])).data;
    expect((await sdk.deals.pipelines.get(pipeline.id)).data.name).toBe('Sales');
    expect((await sdk.deals.pipelines.list()).data.map((p) => p.id)).toContain(pipeline.id);
    const stage = (await sdk.deals.pipelines.addStage(pipeline.id, { name: 'Proposal' })).data;
    await sdk.deals.pipelines.update(pipeline.id, { name: 'Sales (EMEA)' });
    const stages = (await sdk.deals.pipelines.get(pipeline.id)).data.stages;
    const won = stages.find((s) => s.name === 'Won')!;
    const lead = stages.find((s) => s.name === 'Lead')!;

    const list = (await sdk.lists.create({ name: 'People', type: 'contacts' })).data;
    const contact = (await sdk.contacts.create({ list_id: list.id, name: 'Grace Hopper' })).data;
    const deal = (await sdk.deals.create({ name: 'Navy contract', amount: 1200, pipeline_id: pipeline.id, stage_id: lead.id })).data;
    await sdk.deals.update(deal.id, { stage_id: won.id });
    expect((await sdk.deals.get(deal.id)).data.stage_id).toBe(won.id);
    expect((await sdk.deals.stageHistory(deal.id)).data.length).toBeGreaterThanOrEqual(1);
    expect((await sdk.deals.summary({ pipeline_id: pipeline.id })).data.totals.count).toBe(1);
    await sdk.deals.contacts.add(deal.id, contact.id, {});
    expect((await sdk.deals.contacts.list(deal.id)).data.map((c) => c.contact_id)).toEqual([contact.id]);
    expect((await sdk.contacts.deals(contact.id)).data.map((d) => d.id)).toEqual([deal.id]);
    await sdk.deals.contacts.remove(deal.id, contact.id);
    expect((await sdk.deals.list({ pipeline_id: pipeline.id } as never)).data).toHaveLength(1);
    await sdk.deals.pipelines.deleteStage(pipeline.id, stage.id);

    const checklist = (await sdk.pipelines.create({ name: 'Enterprise' })).data;
    expect((await sdk.pipelines.get(checklist.id)).data.name).toBe('Enterprise');
    expect((await sdk.pipelines.list()).data.length).toBeGreaterThanOrEqual(1);

    const task = (await sdk.tasks.create({ title: 'Call Grace' })).data;
    await sdk.tasks.update(task.id, { title: 'Call Grace back' });
    expect((await sdk.tasks.get(task.id)).data.title).toBe('Call Grace back');
    await sdk.tasks.createOnDeal(deal.id, { title: 'Send the contract' });
    expect((await sdk.tasks.listOfDeal(deal.id)).data).toHaveLength(1);
    expect((await sdk.tasks.list()).data).toHaveLength(2);
    await sdk.tasks.delete(task.id);

    const note = (await sdk.notes.createOnContact(contact.id, { content: 'Met at the conference' })).data;
    await sdk.notes.update(note.id, { content: 'Met at the conference in Boston' });
    expect((await sdk.notes.get(note.id)).data.content).toMatch(/Boston/);
    expect((await sdk.notes.listOfContact(contact.id)).data).toHaveLength(1);
    expect((await sdk.notes.list()).data).toHaveLength(1);
    await sdk.notes.delete(note.id);
    await sdk.deals.delete(deal.id);
  });

  it('products, quotes (send, public accept), campaigns (launch, pause, resume)', async () => {
    const { sdk } = await fresh();
    const product = (await sdk.products.create({ name: 'Seat', unit_price: 4900, currency: 'USD' })).data;
    await sdk.products.update(product.id, { description: 'One user' });
    expect((await sdk.products.get(product.id)).data.description).toBe('One user');
    expect((await sdk.products.list()).data).toHaveLength(1);
    expect((await sdk.quotes.quotableProducts()).data.map((p) => p.id)).toContain(product.id);

    const list = (await sdk.lists.create({ name: 'Audience', type: 'contacts' })).data;
    const contact = (await sdk.contacts.create({ list_id: list.id, name: 'Alan Turing', work_email: 'alan@example.com' })).data;
    const quote = (await sdk.quotes.create({ title: 'Seats for 2027', contact_id: contact.id, line_items: [{ product_id: product.id, quantity: 3 }] })).data;
    await sdk.quotes.update(quote.id, { terms: 'Net 30' });
    const sent = (await sdk.quotes.send(quote.id)).data;
    expect(sent.status).toBe('sent');
    const publicQuote = await sdk.publicQuotes.get(sent.public_token!);
    expect(publicQuote.data.title).toBe('Seats for 2027');
    await sdk.publicQuotes.accept(sent.public_token!, { name: 'Ada Lovelace' });
    expect((await sdk.quotes.get(quote.id)).data.status).toBe('accepted');
    expect((await sdk.quotes.duplicate(quote.id)).data.status).toBe('draft');
    expect((await sdk.quotes.list()).data).toHaveLength(2);

    const mailbox = (await sdk.mailboxes.create({ email: 'ada@sender.example' })).data;
    const steps = [{ channel: 'email' as const, delay_days: 1, subject: 'Hello', body: 'Hi' }];
    const campaign = (await sdk.campaigns.create({ name: 'Launch week', list_id: list.id, mailbox_ids: [mailbox.id], steps })).data;
    await sdk.campaigns.update(campaign.id, { name: 'Launch week 2027' });
    // The mailbox is on no verified domain: the preflight fails, so the launch is forced.
    expect((await sdk.campaigns.preflight(campaign.id)).data.ready).toBe(false);
    const launched = (await sdk.campaigns.launch(campaign.id, { force: true })).data;
    expect(launched.status).toBe('active');
    // Its sequence sends the steps; it pauses with the campaign once it is live.
    await waitFor(async () => (await sdk.sequences.get(launched.sequence_id!)).data.status, (s) => s === 'live');
    expect((await sdk.sequences.steps.list(launched.sequence_id!)).data.map((st) => st.step_type)).toEqual(['EMAIL']);
    expect((await sdk.sequences.enrollments(launched.sequence_id!)).data.map((e) => e.contact_id)).toEqual([contact.id]);
    expect((await sdk.campaigns.pause(campaign.id)).data.status).toBe('paused');
    expect((await sdk.campaigns.resume(campaign.id)).data.status).toBe('active');
    expect((await sdk.campaigns.get(campaign.id)).data.audience_count).toBe(1);
    expect((await sdk.campaigns.list()).data).toHaveLength(1);
  });

  it('fields, API keys, usage, organization, events, imports, exports, sandbox', async () => {
    const { org, sdk } = await fresh();
    const field = (await sdk.fields.create({ object: 'contacts', name: 'plan', data_type: 'text' } as Parameters<typeof sdk.fields.create>[0])).data;
    await sdk.fields.update(field.id, { description: 'The plan they are on' } as never);
    expect((await sdk.fields.get(field.id)).data.id).toBe(field.id);
    expect((await sdk.fields.list()).data.map((f) => f.id)).toContain(field.id);
    await sdk.fields.delete(field.id);

    const key = (await sdk.apiKeys.create({ name: 'Reporting', scopes: ['contacts:read'] } as Parameters<typeof sdk.apiKeys.create>[0])).data;
    expect((await sdk.apiKeys.get(key.api_key_id)).data.name).toBe('Reporting');
    await sdk.apiKeys.update(key.api_key_id, { name: 'Reporting (BI)' });
    expect((await sdk.apiKeys.list()).data.keys.map((k) => k.api_key_id)).toContain(key.api_key_id);
    expect((await sdk.apiKeys.scopes()).data.scopes.map((s) => s.scope)).toContain('contacts:read');
    await sdk.apiKeys.revoke(key.api_key_id);

    expect((await sdk.organization.get()).data.id).toBe(org.org_id);
    expect((await sdk.usage.get()).data).toMatchObject({ balance: 1000, granted: 1000, transactions: 1 });
    expect((await sdk.usage.transactions()).data.map((t) => [t.type, t.amount])).toEqual([['grant', 1000]]);

    const list = (await sdk.lists.create({ name: 'Imported', type: 'contacts' })).data;
    const csv = await receiver(() => ({ status: 200, headers: { 'content-type': 'text/csv' }, body: 'Name,Email\nAda,ada@example.com\nGrace,grace@example.com\n' }));
    const started = (await sdk.imports.create({ object: 'contacts', list_id: list.id, url: csv.url })).data;
    const done = await until(() => sdk.imports.get(started.id), (i) => !['queued', 'running'].includes(i.data.status));
    expect(done.data).toMatchObject({ status: 'completed', created: 2 });
    expect((await sdk.imports.errors(started.id)).data).toEqual([]);
    expect(await sdk.imports.errorsCsv(started.id)).toMatch(/row/i);
    const uploaded = (await sdk.imports.upload('Full name;E-mail\nAlan;alan@example.com\nBroken;not-an-email\n', {
      object: 'contacts', list_id: list.id, mode: 'upsert', filename: 'people.csv', mapping: { 'Full name': 'name', 'E-mail': 'work_email' },
    })).data;
    expect(uploaded).toMatchObject({ source: 'upload', filename: 'people.csv', rows_total: 2, mapping: { 'Full name': 'name', 'E-mail': 'work_email' } });
    const uploadDone = await until(() => sdk.imports.get(uploaded.id), (i) => !['queued', 'running'].includes(i.data.status));
    expect(uploadDone.data).toMatchObject({ status: 'completed_with_errors', created: 1, failed: 1 });
    expect((await sdk.imports.errors(uploaded.id)).data.map((e) => e.row)).toEqual([3]);
    expect((await sdk.imports.list()).data).toHaveLength(2);

    const exported = (await sdk.exports.create({ object: 'contacts' })).data;
    const finished = await until(() => sdk.exports.get(exported.id), (e) => !['queued', 'running'].includes(e.data.status));
    expect(finished.data.status).toBe('completed');
    expect(await sdk.exports.download(exported.id)).toMatch(/grace@example.com/);
    expect((await sdk.exports.list()).data).toHaveLength(1);

    expect((await sdk.events.list({ type: 'contact.created' })).data.length).toBe(3);
    const testMode = new RevenueClient({ apiKey: org.test_token, baseUrl });
    expect((await testMode.sandbox.reset()).data).toMatchObject({ reset: true, companies: 50, deals: 8 });
  });
});

/** Polls `read` until `done` holds (jobs run in the background). */
async function until<T>(read: () => PromiseLike<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('webhooks', () => {
  it('endpoints, deliveries, redeliver, replay, test, rotate-secret; verifyWebhook on real deliveries', async () => {
    const { sdk } = await fresh();
    const hook = await receiver();
    const endpoint = (await sdk.webhooks.create({ url: hook.url, event_types: ['contact.created', 'webhook.test'] })).data;
    expect((await sdk.webhooks.get(endpoint.id)).data.url).toBe(hook.url);
    expect((await sdk.webhooks.list()).data.map((e) => e.id)).toEqual([endpoint.id]);
    expect((await sdk.webhooks.eventTypes()).data.length).toBeGreaterThan(0);

    const list = (await sdk.lists.create({ name: 'People', type: 'contacts' })).data;
    const contact = (await sdk.contacts.create({ list_id: list.id, name: 'Ada' })).data;
    const [delivery] = await hook.until((r) => r.length === 1);
    const event = await verifyWebhook(delivery.body, delivery.headers, endpoint.secret);
    expect(event).toMatchObject({ type: 'contact.created', data: { object: { id: contact.id } } });
    // Headers as a fetch Headers object, and the raw bytes, verify too.
    await verifyWebhook(new TextEncoder().encode(delivery.body), new Headers(delivery.headers as Record<string, string>), endpoint.secret);

    // Anything else is refused: another body, another secret, an old delivery, no signature.
    await expect(verifyWebhook(delivery.body.replace('Ada', 'Eve'), delivery.headers, endpoint.secret)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verifyWebhook(delivery.body, delivery.headers, `whsec_${Buffer.alloc(32, 1).toString('base64')}`)).rejects.toThrow('No matching signature');
    const sixMinutesLater = new Date((Number(delivery.headers['webhook-timestamp']) + 6 * 60) * 1000);
    await expect(verifyWebhook(delivery.body, delivery.headers, endpoint.secret, sixMinutesLater)).rejects.toThrow(/tolerance/);
    await expect(verifyWebhook(delivery.body, { ...delivery.headers, 'webhook-signature': undefined }, endpoint.secret)).rejects.toThrow(/Missing/);

    const deliveries = await until(() => sdk.webhooks.deliveries(endpoint.id), (d) => d.data[0]?.status === 'succeeded');
    expect(deliveries.data.map((d) => d.event_id)).toEqual([event.id]);
    await sdk.webhooks.redeliver(endpoint.id, deliveries.data[0].id);
    await hook.until((r) => r.length === 2);
    await sdk.webhooks.replay(endpoint.id, { created_after: 0 });
    await hook.until((r) => r.length === 3);

    const rotated = (await sdk.webhooks.rotateSecret(endpoint.id)).data;
    expect(rotated.secret).not.toBe(endpoint.secret);
    await sdk.webhooks.test(endpoint.id);
    const [, , , testDelivery] = await hook.until((r) => r.length === 4);
    expect((await verifyWebhook(testDelivery.body, testDelivery.headers, rotated.secret)).type).toBe('webhook.test');

    await sdk.webhooks.update(endpoint.id, { is_active: false });
    await sdk.webhooks.delete(endpoint.id);
    await expect(sdk.webhooks.get(endpoint.id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('auto-pagination', () => {
  it('walks 1,000 contacts with `for await`, one request per page of 200', async () => {
    const pages: string[] = [];
    const { sdk } = await fresh({ fetch: (input, init) => (pages.push(String(input)), fetch(input, init)) });
    const list = (await sdk.lists.create({ name: 'Big', type: 'contacts' })).data;
    for (let batch = 0; batch < 10; batch++) {
      const records = Array.from({ length: 100 }, (_, i) => ({ list_id: list.id, name: `Person ${batch * 100 + i}`, work_email: `p${batch * 100 + i}@example.com` }));
      expect((await sdk.contacts.assertBatch({ records })).data.created).toBe(100);
    }
    pages.length = 0;
    const seen = new Set<string>();
    for await (const contact of sdk.contacts.list({ limit: 200 })) seen.add((contact satisfies Contact).id);
    expect(seen.size).toBe(1000);
    expect(pages).toHaveLength(5);
    expect(pages.slice(1).every((url) => new URL(url).searchParams.get('cursor'))).toBe(true);

    // Awaited, a list is its first page as the service sent it.
    const first = await sdk.contacts.list({ limit: 200, list_id: list.id });
    expect(first.data).toHaveLength(200);
    expect(first.pagination).toMatchObject({ total: 1000, has_next: true });
    expect(await sdk.contacts.list({ limit: 1, work_email: 'p7@example.com' }).toArray()).toHaveLength(1);
  });
});

describe('typed errors', () => {
  it('401, 400, 403, 404, 409, 422 with its items, 429 with retryAfter: a class and a typed `type` each, `param` and `scope` where the service names them', async () => {
    const { sdk } = await fresh();
    const wrongKey = new RevenueClient({ apiKey: 'sk_live_not_a_key', baseUrl });
    const unauthenticated = await wrongKey.contacts.list().then(() => undefined, (e: unknown) => e);
    expect(unauthenticated).toBeInstanceOf(AuthenticationError);
    expect(unauthenticated).toMatchObject({ status: 401, type: 'authentication_failed', requestId: expect.any(String) });

    const key = (await sdk.apiKeys.create({ name: 'Read only', scopes: ['contacts:read'] })).data;
    const readOnly = new RevenueClient({ apiKey: key.api_key_token, baseUrl });
    const denied = await readOnly.companies.create({ name: 'Nope' }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(PermissionError);
    expect(denied).toMatchObject({ status: 403, type: 'permission_denied', scope: 'companies:write', detail: 'API key lacks scope companies:write' });

    const missing = await sdk.contacts.get('con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ status: 404, type: 'not_found', detail: 'Contact not found', message: 'Contact not found', param: undefined });
    // A program branches on the typed union, never on the message.
    const kind: ErrorType | undefined = (missing as ApiError).type;
    expect(kind).toBe('not_found');

    const required = await sdk.contacts.create({ name: 'No list' } as never).catch((e: unknown) => e);
    expect(required).toBeInstanceOf(BadRequestError);
    expect(required).toMatchObject({ status: 400, type: 'bad_request', param: 'list_id', detail: 'list_id is required when creating contacts' });

    const list = (await sdk.lists.create({ name: 'People', type: 'contacts' })).data;
    const mailbox = (await sdk.mailboxes.create({ email: 'grace@sender.example' })).data;
    const campaign = (await sdk.campaigns.create({ name: 'Live', list_id: list.id, mailbox_ids: [mailbox.id], steps: [{ channel: 'email', delay_days: 1, subject: 'Hi', body: 'Hi' }] })).data;
    await sdk.campaigns.launch(campaign.id, { force: true });
    const conflict = await sdk.campaigns.update(campaign.id, { name: 'Too late' }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ConflictError);
    expect(conflict).not.toBeInstanceOf(IdempotencyConflictError);
    expect(conflict).toMatchObject({ status: 409, type: 'conflict', detail: 'Only draft or paused campaigns can be edited' });

    const invalid = await sdk.contacts.create({ list_id: list.id, work_email: 'not an e-mail' }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(invalid).toMatchObject({ status: 422, type: 'validation_error', param: 'work_email' });
    const items = (invalid as ValidationError).errors;
    expect(items[0]).toMatchObject({ loc: expect.arrayContaining(['work_email']), msg: expect.any(String), type: expect.any(String) });
    expect(invalid).toBeInstanceOf(ApiError);

    // The same Idempotency-Key with another request: 422, but an idempotency conflict, not a validation error.
    await sdk.lists.create({ name: 'Once', type: 'contacts' }, { idempotencyKey: 'sdk-reused-key' });
    const reused = await sdk.lists.create({ name: 'Another', type: 'contacts' }, { idempotencyKey: 'sdk-reused-key' }).catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(IdempotencyConflictError);
    expect(reused).not.toBeInstanceOf(ValidationError);
    expect(reused).toMatchObject({ status: 422, type: 'idempotency_conflict' });

    const limited = await listening({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_PER_MINUTE: '1000' });
    try {
      const org = await newOrg(limited.app);
      const noRetries = new RevenueClient({ apiKey: org.live_token, baseUrl: limited.baseUrl, maxRetries: 0 });
      const outcomes = await Promise.allSettled([noRetries.usage.get(), noRetries.usage.get(), noRetries.usage.get()]);
      const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toBeInstanceOf(RateLimitError);
      expect(refused.reason).toMatchObject({ status: 429, type: 'rate_limited' });
      expect((refused.reason as RateLimitError).retryAfter).toBeGreaterThan(0);
    } finally {
      await stop(limited.app);
    }
  });
});

describe('retries', () => {
  /** A fetch that records what it sends and lets `answer` replace the n-th answer (or throw). */
  function recording(answer: (n: number, real: () => Promise<Response>) => Promise<Response>) {
    const sent: Array<{ method: string; key: string | null; status?: number }> = [];
    const wrapped: typeof fetch = async (input, init) => {
      const entry = { method: init?.method ?? 'GET', key: new Headers(init?.headers).get('idempotency-key') };
      sent.push(entry);
      const response = await answer(sent.length - 1, () => fetch(input, init));
      Object.assign(entry, { status: response.status });
      return response;
    };
    return { sent, fetch: wrapped };
  }
  const problem = (status: number, type: ErrorType | undefined, detail: string) =>
    new Response(JSON.stringify({ type, detail }), { status, headers: { 'content-type': 'application/json' } });

  it('a write refused with 429 is sent again after Retry-After, with the same Idempotency-Key, and creates one record', async () => {
    const limited = await listening({ RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_PER_MINUTE: '1000' });
    try {
      const org = await newOrg(limited.app);
      const wire = recording((_n, real) => real());
      const sdk = new RevenueClient({ apiKey: org.live_token, baseUrl: limited.baseUrl, fetch: wire.fetch });
      const spend = new RevenueClient({ apiKey: org.live_token, baseUrl: limited.baseUrl, maxRetries: 0 });
      // Spends this second's request right before the write; should the second turn in between (the
      // write then passes at once), the scenario runs again.
      const created: string[] = [];
      let writes: typeof wire.sent = [];
      let started = 0;
      for (let round = 0; round < 5 && writes[0]?.status !== 429; round++) {
        await spend.usage.get().catch(() => undefined);
        wire.sent.length = 0;
        started = Date.now();
        created.push((await sdk.lists.create({ name: `Once ${round}`, type: 'contacts' })).data.id);
        writes = wire.sent.filter((s) => s.method === 'POST');
      }
      expect(writes.map((s) => s.status)).toEqual([429, 201]);
      expect(writes[0].key).toMatch(/^[0-9a-f-]{36}$/);
      expect(writes[1].key).toBe(writes[0].key);
      expect(Date.now() - started).toBeGreaterThanOrEqual(500); // Retry-After, not an immediate retry
      // One record per create call, the retried one included.
      const lists = await sdk.lists.list();
      expect(lists.data.map((l) => l.id).sort()).toEqual(created.sort());
    } finally {
      await stop(limited.app);
    }
  });

  it('a lost answer (503 after the write ran), a network error and a 409 in flight are retried: still one record', async () => {
    const { org, sdk: plain } = await fresh();
    const list = (await plain.lists.create({ name: 'People', type: 'contacts' })).data;
    const wire = recording(async (n, real) => {
      if (n === 0) throw new TypeError('fetch failed');
      if (n === 1) return problem(409, 'idempotency_conflict', 'A request with this Idempotency-Key is still being processed; retry later');
      const response = await real();
      return n === 2 ? problem(503, 'service_unavailable', 'The service is temporarily unavailable; retry with backoff') : response;
    });
    const sdk = new RevenueClient({ apiKey: org.live_token, baseUrl, fetch: wire.fetch, maxRetries: 3 });
    const contact = (await sdk.contacts.create({ list_id: list.id, name: 'Exactly once' })).data;
    expect(wire.sent.map((s) => s.status)).toEqual([undefined, 409, 503, 201]);
    expect(new Set(wire.sent.map((s) => s.key)).size).toBe(1);
    expect((await plain.contacts.list()).data.map((c) => c.id)).toEqual([contact.id]);
  });

  it('gives up after maxRetries, and never retries what cannot succeed', async () => {
    const { org } = await fresh();
    // A proxy's 502, with no type of the service's: retried, then an ApiError by its status.
    const failing = recording(async () => problem(502, undefined, 'Bad gateway'));
    const sdk = new RevenueClient({ apiKey: org.live_token, baseUrl, fetch: failing.fetch, maxRetries: 1 });
    await expect(sdk.usage.get()).rejects.toMatchObject({ status: 502, type: undefined, detail: 'Bad gateway' });
    expect(failing.sent).toHaveLength(2);

    // A conflict with the state, or a provider that is not configured, does not go away by retrying.
    for (const [status, type, Class] of [[409, 'conflict', ConflictError], [503, 'provider_not_configured', ProviderNotConfiguredError]] as const) {
      const refused = recording(async () => problem(status, type, 'Refused'));
      const client = new RevenueClient({ apiKey: org.live_token, baseUrl, fetch: refused.fetch, maxRetries: 3 });
      const error = await client.lists.create({ name: 'x', type: 'contacts' }).catch((e: unknown) => e);
      expect(error, type).toBeInstanceOf(Class);
      expect(error, type).not.toBeInstanceOf(ServiceUnavailableError);
      expect(refused.sent, type).toHaveLength(1);
    }

    const notFound = recording((_n, real) => real());
    const once = new RevenueClient({ apiKey: org.live_token, baseUrl, fetch: notFound.fetch });
    await expect(once.contacts.update('con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', { name: 'X' })).rejects.toBeInstanceOf(NotFoundError);
    expect(notFound.sent).toHaveLength(1);
  });
});

describe('event stream', () => {
  it('yields events live after `since`, and resumes with Last-Event-ID after a dropped connection', async () => {
    const { org, sdk: plain } = await fresh();
    const list = (await plain.lists.create({ name: 'People', type: 'contacts' })).data;
    const [created] = (await plain.events.list({ type: 'list.created' })).data;

    // The first connection is cut right after its first event.
    const resumedFrom: Array<string | null> = [];
    const cutting: typeof fetch = async (input, init) => {
      resumedFrom.push(new Headers(init?.headers).get('last-event-id'));
      const response = await fetch(input, init);
      return resumedFrom.length === 1 ? new Response(cutAfterFirstEvent(response.body!), response) : response;
    };
    const sdk = new RevenueClient({ apiKey: org.live_token, baseUrl, fetch: cutting });
    const names = ['One', 'Two', 'Three'];
    for (const name of names) await plain.contacts.create({ list_id: list.id, name });

    const got: Event[] = [];
    for await (const event of sdk.events.stream({ since: created.id })) {
      got.push(event);
      if (got.length === 3) break;
    }
    expect(got.map((e) => e.type)).toEqual(['contact.created', 'contact.created', 'contact.created']);
    expect(got.map((e) => (e.data as { object: { name: string } }).object.name)).toEqual(names);
    expect(resumedFrom).toEqual([created.id, got[0].id]);

    // Live: an event committed while the stream is open arrives.
    const stop = new AbortController();
    const live = sdk.events.stream({ since: got[2].id, type: 'contact.updated', signal: stop.signal })[Symbol.asyncIterator]();
    const next = live.next();
    await plain.contacts.update(got[0].data.object.id as string, { title: 'CEO' });
    const { value } = await next;
    expect(value).toMatchObject({ type: 'contact.updated' });
    stop.abort();
    expect(await live.next()).toMatchObject({ done: true });
  });

  it('an unknown Last-Event-ID is a typed error, not a retry loop', async () => {
    const { sdk } = await fresh();
    const stream = sdk.events.stream({ since: 'evt_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' });
    await expect(stream.next()).rejects.toMatchObject({ status: 400, detail: expect.stringMatching(/Unknown Last-Event-ID/) });
  });
});

/** Passes the SSE body through until the end of its first event, then fails like a reset connection. */
function cutAfterFirstEvent(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let text = '';
  return new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      text += new TextDecoder().decode(value);
      const end = text.indexOf('\n\n', text.indexOf('data:'));
      if (text.includes('data:') && end !== -1) {
        controller.enqueue(new TextEncoder().encode(text.slice(0, end + 2)));
        await reader.cancel();
        controller.error(new TypeError('terminated: connection reset'));
        return;
      }
    },
  });
}
