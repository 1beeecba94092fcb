import { request as httpRequest, type IncomingMessage, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWrite } from '../../src/platform/write.ts';
import { createList } from '../../src/resources/lists/lists.store.ts';
import { client, tenant, testApp, type Client } from '../helpers/app.ts';

interface SseEvent {
  id: string;
  event: string;
  data: { id: string; type: string; created_at: number; data: { object: Record<string, unknown> }; previous_attributes: Record<string, unknown> | null };
}

interface Stream {
  res: IncomingMessage;
  events: SseEvent[];
  comments: string[];
  ended: Promise<void>;
  waitFor(check: () => boolean, ms?: number): Promise<void>;
  close(): void;
}

/** Opens GET /v1/events as a Server-Sent Events stream over a real socket and parses what arrives. */
function openStream(port: number, token: string, headers: Record<string, string> = {}, path = '/v1/events'): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const events: SseEvent[] = [];
    const comments: string[] = [];
    let buffer = '';
    const waitFor = async (check: () => boolean, ms = 5000) => {
      const deadline = Date.now() + ms;
      while (!check()) {
        if (Date.now() > deadline) throw new Error(`timed out; got ${events.map((e) => e.event).join(', ')}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    const req: ClientRequest = httpRequest({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers } }, (res) => {
      res.setEncoding('utf8');
      const ended = new Promise<void>((done) => {
        res.on('end', done);
        res.on('close', done);
      });
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const fields: Record<string, string> = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else {
              const colon = line.indexOf(':');
              fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
            }
          }
          if (fields.data !== undefined) events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data) });
        }
      });
      resolve({ res, events, comments, ended, waitFor, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

const newList = async (c: Client, name: string) => {
  const res = await c.post('/v1/lists', { name, type: 'contacts' });
  expect(res.statusCode).toBe(201);
  return res.json().data.id as string;
};

describe('GET /v1/events (list)', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await testApp();
  });
  afterAll(() => app.close());

  it('pages newest first by cursor and by page number with an exact total', async () => {
    const t = await tenant(app);
    const ids = [];
    for (let i = 1; i <= 5; i++) ids.push(await newList(t.live, `L${i}`));
    const first = await t.live.get('/v1/events?limit=2');
    expect(first.statusCode).toBe(200);
    const body = first.json();
    expect(body.pagination).toMatchObject({ page: 1, limit: 2, total: 6, has_next: true });
    const seen = [...body.data];
    let cursor = body.next_cursor;
    while (cursor) {
      const next = (await t.live.get(`/v1/events?limit=2&cursor=${encodeURIComponent(cursor)}`)).json();
      seen.push(...next.data);
      cursor = next.next_cursor;
    }
    expect(seen.map((e) => e.type)).toEqual(['list.created', 'list.created', 'list.created', 'list.created', 'list.created', 'usage.grant']);
    expect(seen.slice(0, 5).map((e) => e.data.object.id)).toEqual([...ids].reverse());
    expect(new Set(seen.map((e) => e.id)).size).toBe(6);

    const page2 = (await t.live.get('/v1/events?limit=2&page=2')).json();
    expect(page2.data.map((e: SseEvent['data']) => e.data.object.id)).toEqual([ids[2], ids[1]]);
    expect(page2.pagination).toMatchObject({ page: 2, total: 6, has_next: true });
  });

  it('returns records with id, type, created_at, data.object and previous_attributes', async () => {
    const t = await tenant(app);
    const id = await newList(t.live, 'Shape');
    const [event] = (await t.live.get('/v1/events?limit=1')).json().data;
    expect(Object.keys(event).sort()).toEqual(['actor', 'created_at', 'data', 'id', 'previous_attributes', 'type']);
    expect(event).toMatchObject({ type: 'list.created', previous_attributes: null, data: { object: { id, name: 'Shape', type: 'contacts' } } });
    expect(event.id).toMatch(/^evt_/);
    expect(Math.abs(event.created_at - Date.now() / 1000)).toBeLessThan(60);
  });

  it('filters by type and created_after, with exact totals', async () => {
    const t = await tenant(app);
    for (let i = 0; i < 3; i++) await newList(t.live, `F${i}`);
    const byType = (await t.live.get('/v1/events?type=list.created')).json();
    expect(byType.pagination.total).toBe(3);
    expect(byType.data.every((e: { type: string }) => e.type === 'list.created')).toBe(true);
    expect((await t.live.get('/v1/events?type=usage.grant')).json().pagination.total).toBe(1);
    expect((await t.live.get('/v1/events?type=contact.created')).json()).toMatchObject({ data: [], pagination: { total: 0, has_next: false } });
    const future = Math.floor(Date.now() / 1000) + 3600;
    expect((await t.live.get(`/v1/events?created_after=${future}`)).json()).toMatchObject({ data: [], pagination: { total: 0 } });
    const all = (await t.live.get('/v1/events?created_after=0')).json();
    expect(all.pagination.total).toBe(4);
    const both = (await t.live.get('/v1/events?created_after=0&type=list.created&limit=2')).json();
    expect(both.pagination).toMatchObject({ total: 3, has_next: true });
    const rest = (await t.live.get(`/v1/events?created_after=0&type=list.created&limit=2&cursor=${encodeURIComponent(both.next_cursor)}`)).json();
    expect(rest.data).toHaveLength(1);
  });

  it('records exactly three events for a contact created, updated and deleted', async () => {
    const t = await tenant(app);
    const listId = await newList(t.live, 'People');
    const created = await t.live.post('/v1/contacts', { list_id: listId, name: 'Ada Lovelace', title: 'Engineer', work_email: 'ada@example.com' });
    const id = created.json().data.id;
    expect((await t.live.patch(`/v1/contacts/${id}`, { title: 'VP Engineering' })).statusCode).toBe(200);
    expect((await t.live.delete(`/v1/contacts/${id}`)).statusCode).toBe(200);
    const events = (await t.live.get('/v1/events?limit=200')).json().data.filter((e: { type: string }) => e.type.startsWith('contact.'));
    expect(events.map((e: { type: string }) => e.type)).toEqual(['contact.deleted', 'contact.updated', 'contact.created']);
    expect(events.every((e: SseEvent['data']) => e.data.object.id === id)).toBe(true);
    const [deleted, updated, createdEvent] = events;
    expect(createdEvent.previous_attributes).toBeNull();
    expect(createdEvent.data.object).toMatchObject({ title: 'Engineer', work_email: 'ada@example.com', list_id: listId });
    expect(updated.previous_attributes).toEqual({ title: 'Engineer' });
    expect(updated.data.object.title).toBe('VP Engineering');
    expect(deleted.previous_attributes).toBeNull();
    expect(deleted.data.object.title).toBe('VP Engineering');
  });

  it('shows only the caller organization and mode', async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    const listId = await newList(a.live, 'Private');
    const objectIds = async (c: Client) => (await c.get('/v1/events?limit=200&type=list.created')).json().data.map((e: SseEvent['data']) => e.data.object.id);
    expect(await objectIds(a.live)).toEqual([listId]);
    expect(await objectIds(b.live)).toEqual([]);
    expect(await objectIds(a.test)).not.toContain(listId);
    expect((await b.live.get('/v1/events')).json().pagination.total).toBe(1);
  });

  it('refuses missing keys, foreign cursors and bad filters', async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    for (let i = 0; i < 2; i++) await newList(a.live, `C${i}`);
    expect((await client(app, undefined).get('/v1/events')).statusCode).toBe(401);
    expect((await client(app, 'svc_live_nope').get('/v1/events')).json()).toEqual({ type: 'authentication_failed', detail: 'API key not associated with an organization' });
    const cursor = (await a.live.get('/v1/events?limit=1')).json().next_cursor;
    for (const other of [b.live, a.test]) {
      const res = await other.get(`/v1/events?limit=1&cursor=${encodeURIComponent(cursor)}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().type).toBe('bad_request');
    }
    expect((await a.live.get('/v1/events?created_after=yesterday')).statusCode).toBe(422);
    expect((await a.live.get('/v1/events?limit=500')).statusCode).toBe(422);
  });

  it('answers 400 for a Last-Event-ID that is not an event of the tenant, before any stream starts', async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    const [foreign] = (await b.live.get('/v1/events?limit=1')).json().data;
    for (const headers of [{ 'last-event-id': 'evt_unknown' }, { 'last-event-id': foreign.id }]) {
      const res = await a.live.get('/v1/events', { accept: 'text/event-stream', ...headers });
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.json().detail).toMatch(/^Unknown Last-Event-ID/);
    }
    const viaQuery = await a.live.get(`/v1/events?last_event_id=${foreign.id}`, { accept: 'text/event-stream' });
    expect(viaQuery.statusCode).toBe(400);
  });
});

describe('GET /v1/events (Server-Sent Events)', () => {
  let app: FastifyInstance;
  let port: number;
  const streams: Stream[] = [];
  const open = async (...args: Parameters<typeof openStream> extends [number, ...infer R] ? R : never) => {
    const s = await openStream(port, ...args);
    streams.push(s);
    return s;
  };
  beforeAll(async () => {
    app = await testApp({ env: { SSE_HEARTBEAT_MS: '50' } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const s of streams) s.close();
    await app.close();
  });

  it('streams events written after connecting, with the SSE and rate-limit headers', async () => {
    const t = await tenant(app);
    const s = await open(t.live_token);
    expect(s.res.statusCode).toBe(200);
    expect(s.res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(s.res.headers['cache-control']).toBe('no-cache');
    expect(s.res.headers['x-request-id']).toBeTruthy();
    expect(s.res.headers['x-ratelimit-limit-second']).toBe('50');
    expect(s.res.headers['x-ratelimit-remaining']).toBeDefined();
    const listId = await newList(t.live, 'Live');
    await s.waitFor(() => s.events.length >= 1);
    const [event] = s.events;
    expect(event.event).toBe('list.created');
    expect(event.data.type).toBe('list.created');
    expect(event.id).toBe(event.data.id);
    expect(event.data.data.object.id).toBe(listId);
    const listed = (await t.live.get('/v1/events?limit=1')).json().data[0];
    expect(event.data).toEqual(listed);
  });

  it('resumes after Last-Event-ID with the missed events in order, then continues live', async () => {
    const t = await tenant(app);
    await newList(t.live, 'R0');
    const [mark] = (await t.live.get('/v1/events?limit=1')).json().data;
    const missed = [await newList(t.live, 'R1'), await newList(t.live, 'R2'), await newList(t.live, 'R3')];
    const s = await open(t.live_token, { 'last-event-id': mark.id });
    await s.waitFor(() => s.events.length >= 3);
    expect(s.events.map((e) => e.data.data.object.id)).toEqual(missed);
    const later = await newList(t.live, 'R4');
    await s.waitFor(() => s.events.length >= 4);
    expect(s.events[3].data.data.object.id).toBe(later);

    const viaQuery = await open(t.live_token, {}, `/v1/events?last_event_id=${s.events[1].id}`);
    await viaQuery.waitFor(() => viaQuery.events.length >= 2);
    expect(viaQuery.events.map((e) => e.data.data.object.id)).toEqual([missed[2], later]);
  });

  it('narrows the stream with type', async () => {
    const t = await tenant(app);
    const s = await open(t.live_token, {}, '/v1/events?type=contact.created');
    const listId = await newList(t.live, 'Typed');
    const contact = (await t.live.post('/v1/contacts', { list_id: listId, name: 'Grace Hopper' })).json().data;
    await s.waitFor(() => s.events.length >= 1);
    expect(s.events.map((e) => e.event)).toEqual(['contact.created']);
    expect(s.events[0].data.data.object.id).toBe(contact.id);
  });

  it('picks up events committed without an in-process wake-up by polling the store', async () => {
    const t = await tenant(app);
    const s = await open(t.live_token);
    const list = await runWrite(app.services.database, { orgId: t.org_id, mode: 'live' }, (w) => createList(w, { name: 'From elsewhere', type: 'leads' }));
    await s.waitFor(() => s.events.length >= 1, 3000);
    expect(s.events[0].data.data.object.id).toBe(list.id);
  });

  it('sends heartbeat comments', async () => {
    const t = await tenant(app);
    const s = await open(t.test_token);
    await s.waitFor(() => s.comments.filter((c) => c === 'ping').length >= 2, 2000);
    expect(s.events).toEqual([]);
  });

  it('never sends another organization or mode its events', async () => {
    const a = await tenant(app);
    const b = await tenant(app);
    const s = await open(a.live_token);
    await newList(b.live, 'Other org');
    await newList(a.test, 'Other mode');
    await runWrite(app.services.database, { orgId: b.org_id, mode: 'live' }, (w) => createList(w, { name: 'Other org, polled', type: 'contacts' }));
    const mine = await newList(a.live, 'Mine');
    await s.waitFor(() => s.events.length >= 1);
    await new Promise((r) => setTimeout(r, 1200));
    expect(s.events.map((e) => e.data.data.object.id)).toEqual([mine]);
  });

  it('ends once its key is revoked or loses events:read, sending nothing written after', async () => {
    const t = await tenant(app);
    for (const cut of ['revoke', 'narrow'] as const) {
      const { api_key_id, api_key_token } = (await t.live.post('/auth/v1/api-keys', { name: `stream ${cut}` })).json().data;
      const s = await open(api_key_token);
      const before = await newList(t.live, `Before ${cut}`);
      await s.waitFor(() => s.events.some((e) => e.data.data.object.id === before));
      const changed = cut === 'revoke'
        ? await t.live.delete(`/auth/v1/api-keys/${api_key_id}`)
        : await t.live.patch(`/auth/v1/api-keys/${api_key_id}`, { scopes: ['lists:read'] });
      expect(changed.statusCode, changed.body).toBe(200);
      const after = await newList(t.live, `After ${cut}`);
      // Within the key cache's two seconds, and before anything written after the change is sent.
      await Promise.race([s.ended, new Promise((_, reject) => setTimeout(() => reject(new Error(`stream still open after ${cut}`)), 4000))]);
      expect(s.events.map((e) => e.data.data.object.id), cut).not.toContain(after);
      const again = await app.inject({ method: 'GET', url: '/v1/events', headers: { authorization: `Bearer ${api_key_token}`, accept: 'text/event-stream' } });
      expect(again.statusCode, cut).toBe(cut === 'revoke' ? 401 : 403);
    }
  });

  it('ends when the client disconnects, and a new connection still works', async () => {
    const t = await tenant(app);
    const s = await open(t.live_token);
    s.close();
    await s.ended;
    const again = await open(t.live_token);
    const id = await newList(t.live, 'After reconnect');
    await again.waitFor(() => again.events.length >= 1);
    expect(again.events[0].data.data.object.id).toBe(id);
  });
});

describe('event streams on shutdown', () => {
  it('ends every open stream cleanly when the app closes', async () => {
    // No workers: closing waits for running jobs, and on PostgreSQL those may be other files' deliveries.
    const app = await testApp({ env: { SSE_HEARTBEAT_MS: '50', WORKERS: 'off' } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const t = await tenant(app);
    const streams = [await openStream(port, t.live_token), await openStream(port, t.test_token)];
    let ended = 0;
    for (const s of streams) void s.ended.then(() => ended++);
    const started = Date.now();
    await app.close();
    await Promise.all(streams.map((s) => s.ended));
    expect(ended).toBe(2);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(streams.every((s) => s.res.complete)).toBe(true);
  });
});
