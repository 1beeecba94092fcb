// Idempotency claims of requests whose process died or stalled, with real service processes. A
// request cut by SIGKILL after claiming its key is answered normally when retried within 10 s of the
// restart (its claim's lease lapses, src/platform/idempotency-lease.ts) and runs once. On
// PostgreSQL, where a test can hold a request in flight with a row lock while its process runs: a
// request slower than the lease keeps its claim (retries at another process get 409 throughout),
// and a process paused past the lease loses its claim and commits nothing while the retry runs once.
// The request is a bulk addition of 1,000 suppression entries: a retry that ran a second time would
// report them as existing, and the list would hold two `list.entries_added` events for them.
import { describe, expect, it } from 'vitest';
import { isPostgres } from '../helpers/app.ts';
import { storeProbe, waitFor, type ClaimRow, type StoreProbe } from './support/claims.ts';
import { figures } from './support/figures.ts';
import { eventsOf } from './support/reads.ts';
import { json, type Reply } from './support/reply.ts';
import { afterProcessTests, processActor, request, startServer, type ServerProcess } from './support/server-process.ts';
import { freshStore, orgIn, type FreshStore } from './support/stores.ts';

/** How soon after a restart a retry must be answered normally. */
const RETRY_WITHIN_MS = 10_000;
/** Longer than a lease (LEASE_S = 5 s) can last without renewals, with a margin. */
const PAST_THE_LEASE_MS = 8_000;
const ENTRIES = 1000;

const stores: FreshStore[] = [];
afterProcessTests(import.meta.filename, stores);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function setUp(label: string, processes: number) {
  const store = await freshStore(label);
  stores.push(store);
  const env = { DATABASE_URL: store.url, RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000' };
  const servers: ServerProcess[] = [];
  for (let i = 0; i < processes; i++) servers.push(await startServer(env));
  const org = await orgIn(store.url, `Lease ${label}`);
  const owner = processActor(() => servers[0].base, org.org_id, org.live_token);
  const listId: string = json(await owner.call('POST', '/v1/lists', { body: { name: 'Suppressed', type: 'suppressions' } })).data.id;
  const probe = await storeProbe(store);
  return { store, env, servers, org, owner, listId, probe };
}

const entriesOf = (tag: string) => ({ values: Array.from({ length: ENTRIES }, (_, i) => `${tag}-${i}@example.com`) });

/** The bulk addition, sent with `key` to the process at `base`; resolves to its reply or 'lost'. */
function addEntries(base: string, token: string, listId: string, key: string, tag: string): Promise<Reply | 'lost'> {
  figures.requests++;
  return fetch(`${base}/v1/lists/${listId}/entries`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(entriesOf(tag)),
    signal: AbortSignal.timeout(60_000),
  }).then(async (res) => ({ status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() }), () => 'lost' as const);
}

const claimed = async (probe: StoreProbe, orgId: string, key: string): Promise<ClaimRow> =>
  (await waitFor(`claim of ${key}`, () => probe.claim(orgId, 'live', key), (row) => row !== undefined))!;

/** Exactly one execution of the addition tagged `tag`: all entries new, one event for them. */
async function expectRanOnce(owner: ReturnType<typeof processActor>, reply: Reply, tag: string): Promise<void> {
  expect(reply.status, reply.body).toBe(201);
  const data = json(reply).data;
  expect([data.added, data.existing], 'added by this request, none there before').toEqual([ENTRIES, 0]);
  const events = (await eventsOf(owner, 'list.entries_added')).filter((e) => e.data.object.added.includes(`${tag}-0@example.com`));
  expect(events.length, 'list.entries_added events for the addition').toBe(1);
}

describe('Idempotency-Key claims of a process that died or stalled', () => {
  it('answers the retry of a request cut by SIGKILL normally within 10 s of the restart, and runs it once', async () => {
    const { env, servers, org, owner, listId, probe } = await setUp('killed', 1);
    try {
      // On SQLite the kill comes as soon as the claim is seen, which may be after the request
      // finished; such attempts are told apart by the stored response and made again.
      for (let attempt = 1; attempt <= 20; attempt++) {
        const key = `killed-${attempt}`;
        const tag = `k${attempt}`;
        const release = isPostgres() ? await probe.holdWrites(org.org_id, 'live') : undefined;
        const answer = addEntries(servers[0].base, org.live_token, listId, key, tag);
        await claimed(probe, org.org_id, key);
        await servers[0].stop('SIGKILL');
        await release?.();
        const cut = await answer;
        const row = await probe.claim(org.org_id, 'live', key);
        servers[0] = await startServer(env, { port: servers[0].port });
        if (row?.status !== null) continue;
        expect(cut, 'the killed request was not answered').toBe('lost');

        const restarted = Date.now();
        let retry = await owner.call('POST', `/v1/lists/${listId}/entries`, { body: entriesOf(tag), headers: { 'idempotency-key': key } });
        while (retry.status === 409 && Date.now() - restarted < RETRY_WITHIN_MS) {
          await sleep(200);
          retry = await owner.call('POST', `/v1/lists/${listId}/entries`, { body: entriesOf(tag), headers: { 'idempotency-key': key } });
        }
        const waited = Date.now() - restarted;
        console.log(`claim of a killed request taken over ${waited} ms after the restart (attempt ${attempt})`);
        expect(waited).toBeLessThan(RETRY_WITHIN_MS);
        await expectRanOnce(owner, retry, tag);
        const replay = await owner.call('POST', `/v1/lists/${listId}/entries`, { body: entriesOf(tag), headers: { 'idempotency-key': key } });
        expect(replay.headers['idempotent-replayed']).toBe('true');
        expect(replay.body).toBe(retry.body);
        return;
      }
      throw new Error('no attempt caught the request between its claim and its commit');
    } finally {
      await probe.close();
    }
  }, 180_000);

  it.runIf(isPostgres())('keeps the claim of a request slower than the lease: retries at another process get 409 until it answers', async () => {
    const { servers, org, owner, listId, probe } = await setUp('slow', 2);
    const [a, b] = servers;
    try {
      const release = await probe.holdWrites(org.org_id, 'live');
      const answer = addEntries(a.base, org.live_token, listId, 'slow', 'slow');
      const first = await claimed(probe, org.org_id, 'slow');
      const start = Date.now();
      let retries = 0;
      try {
        while (Date.now() - start < PAST_THE_LEASE_MS) {
          const same = await request(b.base, 'POST', `/v1/lists/${listId}/entries`, { token: org.live_token, body: entriesOf('slow'), headers: { 'idempotency-key': 'slow' } });
          expect(same.status, `retry ${Date.now() - start} ms into the request: ${same.body}`).toBe(409);
          retries++;
          await sleep(500);
        }
        const row = await probe.claim(org.org_id, 'live', 'slow');
        expect(row?.lease, 'the claim is still the first request\'s').toBe(first.lease);
        expect(row!.locked_at, 'renewed while the request ran').toBeGreaterThan(first.locked_at);
      } finally {
        await release();
      }
      const reply = await answer;
      expect(reply).not.toBe('lost');
      await expectRanOnce(owner, reply as Reply, 'slow');
      const replay = await request(b.base, 'POST', `/v1/lists/${listId}/entries`, { token: org.live_token, body: entriesOf('slow'), headers: { 'idempotency-key': 'slow' } });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toBe((reply as Reply).body);
      expect(retries).toBeGreaterThan(5);
    } finally {
      await probe.close();
    }
  }, 60_000);

  it.runIf(isPostgres())('takes over the claim of a process paused past the lease; the paused request then commits nothing', async () => {
    const { servers, org, owner, listId, probe } = await setUp('paused', 2);
    const [a, b] = servers;
    try {
      const release = await probe.holdWrites(org.org_id, 'live');
      const first = addEntries(a.base, org.live_token, listId, 'paused', 'paused');
      const claim = await claimed(probe, org.org_id, 'paused');
      a.child.kill('SIGSTOP');
      let second: Promise<Reply | 'lost'> | undefined;
      try {
        // The paused request's transaction now holds the tenant's lock, and renews nothing.
        await release();
        await sleep(PAST_THE_LEASE_MS);
        second = addEntries(b.base, org.live_token, listId, 'paused', 'paused');
        await waitFor('takeover of the claim', () => probe.claim(org.org_id, 'live', 'paused'), (row) => row?.lease !== claim.lease, 10_000, 50);
      } finally {
        a.child.kill('SIGCONT');
      }
      const [late, retried] = await Promise.all([first, second]);
      expect(late === 'lost' ? late : late.status, 'the paused request lost its claim').toBe(409);
      expect(retried).not.toBe('lost');
      await expectRanOnce(owner, retried as Reply, 'paused');
    } finally {
      await probe.close();
    }
  }, 60_000);
});
