// The generated CRUD tests: every resource of the registry, through HTTP, on the run's store. What a
// definition promises (create and read back, exact totals, events with previous_attributes, the named
// 404, the empty-update 400, delete) is checked for each group without a line of its own, so a new
// group is covered by adding its definition. The sandbox reset's table list is checked against the
// store's catalog: a tenant table nobody clears fails here.
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { resourcePath, resources, dataTables } from '../../src/resources/registry.ts';
import { isPostgres, testApp } from '../helpers/app.ts';
import { freshOrg } from '../security/support/actors.ts';
import { loadApi } from '../security/support/api.ts';
import { bodyFor, findRoute } from '../security/support/factories.ts';
import { json } from '../security/support/reply.ts';

const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000' } });
const api = await loadApi(app);
afterAll(() => app.close());

const eventsOf = async (call: (m: string, u: string) => Promise<{ body: string }>, type: string) =>
  JSON.parse((await call('GET', `/v1/events?type=${type}&limit=200`)).body).data as Array<{ data: { object: { id: string } }; previous_attributes: Record<string, unknown> | null }>;

// A group whose records are never created through the API (inbox threads come with the mail) has
// tests of its own for what these check.
const created = resources.filter((r) => !r.routes?.omit?.includes('create'));

describe.each(created.map((r) => [resourcePath(r).slice('/v1/'.length), r] as const))('kernel resource %s', (plural, r) => {
  it('creates, reads back, lists with an exact total, updates, and deletes, recording each event', async () => {
    const org = await freshOrg(app, plural);
    const actor = org.live;
    const call = (method: string, url: string, body?: unknown) => actor.call(method, url, body === undefined ? {} : { body });
    const before = json(await call('GET', `/v1/${plural}?limit=1`)).pagination.total;

    const created = await call('POST', `/v1/${plural}`, await bodyFor(api, actor, findRoute(api, 'POST', `/v1/${plural}`)));
    expect(created.status, created.body).toBe(201);
    const record = json(created).data;
    // A secret field (a webhook's signing secret) is answered by the create only: never read back, listed or in an event.
    for (const [name] of Object.entries(r.fields).filter(([, f]) => f.secret)) {
      expect(typeof record[name], name).toBe('string');
      delete record[name];
    }
    expect(record.id.startsWith(`${r.prefix}_`)).toBe(true);
    expect(json(await call('GET', `/v1/${plural}/${record.id}`)).data).toEqual(record);
    const page = json(await call('GET', `/v1/${plural}?limit=200`));
    expect(page.pagination.total).toBe(before + 1);
    expect(page.data.find((x: { id: string }) => x.id === record.id)).toEqual(record);
    const [createdEvent] = (await eventsOf(call, `${r.name}.created`)).filter((e) => e.data.object.id === record.id);
    expect(createdEvent.data.object).toEqual(record);

    // A group that leaves the update out (`routes.omit`) has no PATCH route: an unknown route.
    const updates = !r.routes?.omit?.includes('update');
    const change = updates ? await bodyFor(api, actor, findRoute(api, 'PATCH', `/v1/${plural}/:id`)) as Record<string, unknown> : {};
    if (updates) {
      const empty = await call('PATCH', `/v1/${plural}/${record.id}`, {});
      expect(empty.status).toBe(400);
      expect(json(empty)).toEqual({ type: 'bad_request', detail: 'No fields to update' });
      const updated = await call('PATCH', `/v1/${plural}/${record.id}`, change);
      expect(updated.status, updated.body).toBe(200);
      const after = json(updated).data;
      expect(json(await call('GET', `/v1/${plural}/${record.id}`)).data).toEqual(after);
      const [updatedEvent] = (await eventsOf(call, `${r.name}.updated`)).filter((e) => e.data.object.id === record.id);
      expect(updatedEvent.data.object).toEqual(after);
      expect(Object.keys(updatedEvent.previous_attributes ?? {}).sort()).toEqual(Object.keys(change).sort());
      for (const key of Object.keys(change)) expect(updatedEvent.previous_attributes![key]).toEqual(record[key]);
    } else {
      expect((await call('PATCH', `/v1/${plural}/${record.id}`, {})).status).toBe(404);
    }

    const deleted = await call('DELETE', `/v1/${plural}/${record.id}`);
    expect(deleted.status, deleted.body).toBe(200);
    expect(json(deleted)).toEqual({ data: { id: record.id, deleted: true } });
    expect(json(await call('GET', `/v1/${plural}?limit=1`)).pagination.total).toBe(before);
    expect((await eventsOf(call, `${r.name}.deleted`)).some((e) => e.data.object.id === record.id)).toBe(true);
    // A soft delete keeps the row, stamped, for what still names it; a delete leaves none.
    const stamp = r.softDelete ? sql.ref('deleted_at') : sql`null`;
    const left = await sql<{ deleted_at: unknown }>`select ${stamp} as deleted_at from ${sql.table(r.table)} where id = ${record.id}`.execute(app.services.database.db);
    expect(left.rows.map((row) => row.deleted_at !== null)).toEqual(r.softDelete ? [true] : []);
    for (const [method, url, body] of [['GET', '', undefined], ...(updates ? [['PATCH', '', change] as const] : []), ['DELETE', '', undefined]] as const) {
      const gone = await call(method, `/v1/${plural}/${record.id}${url}`, body);
      expect(gone.status, `${method} after delete`).toBe(404);
      expect(json(gone)).toEqual({ type: 'not_found', detail: r.notFound });
    }
  });

  it('answers another organization and the other mode exactly like a missing id', async () => {
    const a = await freshOrg(app, `${plural} a`);
    const b = await freshOrg(app, `${plural} b`);
    const made = await a.live.call('POST', `/v1/${plural}`, { body: await bodyFor(api, a.live, findRoute(api, 'POST', `/v1/${plural}`)) });
    const id = json(made).data.id;
    for (const intruder of [b.live, b.test, a.test]) {
      for (const method of ['GET', 'DELETE']) {
        const res = await intruder.call(method, `/v1/${plural}/${id}`);
        expect(res.status).toBe(404);
        expect(json(res)).toEqual({ type: 'not_found', detail: r.notFound });
      }
      expect(json(await intruder.call('GET', `/v1/${plural}?limit=200`)).data.some((x: { id: string }) => x.id === id)).toBe(false);
    }
    expect((await a.live.call('GET', `/v1/${plural}/${id}`)).status).toBe(200);
  });
});

describe('the registry', () => {
  it('names every tenant table of the store in the sandbox reset (or keeps it on purpose)', async () => {
    // Kept on purpose: the event log and counters (reset keeps the sequence moving), idempotency records,
    // agency links and grants (access between organizations, not sample data), configuration like API
    // keys (webhook endpoints, provider connections, mailboxes, sending domains, and the inbound side
    // of e-mail connections: inbound URLs, IMAP cursors; voice numbers and rubrics) and the job queue (a delivery of an event the
    // reset removed is dropped when it runs).
    const kept = new Set(['events', 'counters', 'idempotency_keys', 'agency_links', 'agency_grants', 'jobs',
      'webhook_endpoints', 'connections', 'mailboxes', 'sending_domains', 'inbound_links', 'imap_cursors', 'voice_numbers', 'voice_rubrics']);
    const db = app.services.database.db;
    const tables = isPostgres()
      ? (await sql<{ name: string }>`select table_name as name from information_schema.columns where table_schema = current_schema() and column_name = 'mode'`.execute(db)).rows.map((r) => r.name)
      : (await sql<{ name: string }>`select m.name from sqlite_master m, pragma_table_info(m.name) p where m.type = 'table' and p.name = 'mode'`.execute(db)).rows.map((r) => r.name);
    const uncovered = tables.filter((t) => !kept.has(t) && !dataTables.includes(t as never) && t !== 'api_keys');
    expect(uncovered).toEqual([]);
  });
});
