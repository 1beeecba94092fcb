// The live event stream under concurrent writes from 4 service processes on one store. A stream on
// one process learns of other processes' commits only through its timer poll of "events after the
// last seq sent", so it is correct only if seqs are numbered in commit order across processes: an
// event numbered before another but committed after it would be skipped by a stream that had
// already read past it. Here a stream opened before the writes, and a second one resumed with
// Last-Event-ID on another process while writes are still in flight, must each deliver every event
// exactly once and in the store's order.
import { describe, expect, it } from 'vitest';
import { databaseUrl, isPostgres, redisUrl } from '../helpers/app.ts';
import { figures } from './support/figures.ts';
import { json } from './support/reply.ts';
import { afterProcessTests, request, startServer, type ServerProcess } from './support/server-process.ts';
import { freshStore, orgIn, type FreshStore } from './support/stores.ts';

const PROCESSES = 4;
const CONTACTS = 400;
/** Creates in flight at once at each process. */
const IN_FLIGHT = 12;
const DELIVERY_TIMEOUT_MS = 30_000;
/** Longer than the streams' poll (1 s): a repeated event would have arrived by then. */
const SETTLE_MS = 1500;

const stores: FreshStore[] = [];
afterProcessTests(import.meta.filename, stores);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface StreamedEvent {
  id: string;
  event: string;
  data: { id: string; type: string; data: { object: { id: string } } };
}

interface Stream {
  events: StreamedEvent[];
  /** Why the stream ended before it was closed, if it did. */
  ended?: string;
  close(): void;
}

/** Opens the live stream at `base` and parses its frames as they arrive; resolves once the headers are in. */
async function openStream(base: string, token: string, lastEventId?: string): Promise<Stream> {
  const abort = new AbortController();
  figures.requests++;
  const res = await fetch(`${base}/v1/events`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const stream: Stream = { events: [], close: () => abort.abort() };
  void (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const fields: Record<string, string> = {};
          for (const line of buffer.slice(0, cut).split('\n')) {
            if (line.startsWith(':')) continue; // a ping
            const colon = line.indexOf(':');
            fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
          }
          buffer = buffer.slice(cut + 2);
          if (fields.data !== undefined) stream.events.push({ id: fields.id, event: fields.event, data: JSON.parse(fields.data) });
        }
      }
      stream.ended ??= 'the server ended the stream';
    } catch (error) {
      if (!abort.signal.aborted) stream.ended = `the stream failed: ${(error as Error).message}`;
    }
  })();
  return stream;
}

/** Waits until `done()` holds, failing with `progress()` when the stream ends or time runs out. */
async function waitFor(stream: Stream, done: () => boolean, progress: () => string): Promise<void> {
  const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
  while (!done()) {
    if (stream.ended) throw new Error(`${stream.ended} early: ${progress()}`);
    if (Date.now() > deadline) throw new Error(`not delivered within ${DELIVERY_TIMEOUT_MS} ms: ${progress()}`);
    await sleep(20);
  }
}

/** Every event id of the tenant, oldest first, read through the list's cursor pages. */
async function storedEventIds(base: string, token: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let total: number | undefined;
  do {
    const page = json(await request(base, 'GET', `/v1/events?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token }));
    ids.push(...page.data.map((e: { id: string }) => e.id));
    cursor = page.next_cursor;
    total = page.pagination.total;
  } while (cursor);
  expect(ids).toHaveLength(total!);
  return ids.reverse();
}

/** Each frame's `id:` and `event:` lines agree with the event in its `data:`. */
function expectFramesConsistent(stream: Stream): void {
  const mismatched = stream.events.filter((e) => e.data.id !== e.id || e.data.type !== e.event);
  expect(mismatched).toEqual([]);
}

describe(`${PROCESSES} processes writing to one store`, () => {
  it('stream every event once, in the store\'s order, to a stream opened before the writes and to one resumed during them', async () => {
    let url = databaseUrl();
    if (!isPostgres()) {
      const store = await freshStore('event-stream');
      stores.push(store);
      url = store.url;
    }
    // Rate limits high enough that no create is refused: the test is about ordering, not budgets.
    const env = { DATABASE_URL: url, ...(isPostgres() ? { REDIS_URL: redisUrl() } : {}), RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000', SSE_HEARTBEAT_MS: '500' };
    // One process migrates the store first (migrating at once is processes.test.ts's concern), then the rest start.
    const servers: ServerProcess[] = [await startServer(env)];
    servers.push(...await Promise.all(Array.from({ length: PROCESSES - 1 }, () => startServer(env))));
    const org = await orgIn(url, 'Event stream org');
    const token = org.live_token;
    const list = await request(servers[0].base, 'POST', '/v1/lists', { token, body: { name: 'Streamed contacts', type: 'contacts' } });
    expect(list.status).toBe(201);
    const listId = json(list).data.id as string;

    // The first stream starts after the events committed before it opened.
    const before = await storedEventIds(servers[1].base, token);
    const first = await openStream(servers[0].base, token);

    const created: string[] = [];
    let resumed: { stream: Stream; after: string; writesDone: number } | undefined;
    let resuming: Promise<void> | undefined;
    // Halfway through the writes, a client reconnects to another process from the last event it got.
    const resume = async () => {
      await waitFor(first, () => first.events.length > 0, () => 'no event on the first stream');
      const after = first.events.at(-1)!.id;
      const stream = await openStream(servers[2].base, token, after);
      resumed = { stream, after, writesDone: created.length };
    };

    const started = Date.now();
    await Promise.all(servers.flatMap((server, p) => {
      // Contact n is created at process n % PROCESSES, IN_FLIGHT at a time.
      let next = 0;
      return Array.from({ length: IN_FLIGHT }, async () => {
        for (let n = p + PROCESSES * next++; n < CONTACTS; n = p + PROCESSES * next++) {
          const reply = await request(server.base, 'POST', '/v1/contacts', { token, body: { list_id: listId, name: `Contact ${n}`, work_email: `contact${n}@example.com` } });
          expect(reply.status, reply.body).toBe(201);
          created.push(json(reply).data.id);
          if (created.length === CONTACTS / 2) resuming = resume();
        }
      });
    }));
    const writeMs = Date.now() - started;
    await resuming;
    expect(created).toHaveLength(CONTACTS);
    expect(new Set(created).size).toBe(CONTACTS);
    expect(resumed, 'the second stream opened').toBeDefined();
    const second = resumed!.stream;
    expect(resumed!.writesDone, 'writes still in flight when the second stream opened').toBeLessThan(CONTACTS);

    const contactIds = (stream: Stream) => stream.events.filter((e) => e.event === 'contact.created').map((e) => e.data.data.object.id);
    const missing = (stream: Stream, wanted: string[]) => {
      const got = new Set(contactIds(stream));
      return wanted.filter((id) => !got.has(id));
    };
    await waitFor(first, () => missing(first, created).length === 0, () => {
      const lacking = missing(first, created);
      return `the first stream lacks ${lacking.length} of ${CONTACTS} contacts: ${lacking.slice(0, 5).join(', ')}`;
    });
    const deliveredMs = Date.now() - started;

    const stored = await storedEventIds(servers[3].base, token);
    expect(stored.slice(0, before.length), 'the events from before the stream opened are still the oldest').toEqual(before);
    const expectedFirst = stored.slice(before.length);
    const resumeAt = stored.indexOf(resumed!.after);
    expect(resumeAt).toBeGreaterThanOrEqual(before.length);
    const expectedSecond = stored.slice(resumeAt + 1);
    await waitFor(second, () => second.events.length >= expectedSecond.length, () => `second stream has ${second.events.length} of ${expectedSecond.length} events`);
    // Give a repeated or late event time to arrive before comparing whole sequences.
    await sleep(SETTLE_MS);
    first.close();
    second.close();

    expect(first.ended, 'the first stream stayed open').toBeUndefined();
    expect(second.ended, 'the second stream stayed open').toBeUndefined();
    for (const stream of [first, second]) expectFramesConsistent(stream);
    const firstIds = first.events.map((e) => e.id);
    const repeated = firstIds.filter((id, i) => firstIds.indexOf(id) !== i);
    expect(repeated, 'event ids sent twice on the first stream').toEqual([]);
    // Every created contact exactly once: no skip, no repeat.
    expect([...contactIds(first)].sort()).toEqual([...created].sort());
    expect(firstIds, 'the first stream in the store\'s order').toEqual(expectedFirst);
    expect(second.events.map((e) => e.id), 'the resumed stream: every later event, in order, once').toEqual(expectedSecond);

    console.log(`event stream ${isPostgres() ? 'postgres' : 'sqlite'}: ${CONTACTS} creates at ${PROCESSES} processes in ${writeMs} ms, all streamed after ${deliveredMs} ms; resumed after ${resumeAt + 1 - before.length} events with ${resumed!.writesDone} writes done`);
    await Promise.all(servers.map((s) => s.stop()));
  }, 90_000);
});
