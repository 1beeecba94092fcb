// Crash safety. Writers create contacts with unique idempotency keys against a real service process
// and log every acknowledged response; the process is killed with SIGKILL at seeded random moments
// and restarted, round after round. Every round must acknowledge at least MIN_ACKED_PER_ROUND writes
// before its kill, and every answer is a 201 or a connection lost to the kill: anything else fails.
// Afterwards every acknowledged record reads back identical, every unacknowledged key retried after
// the last restart answers 201 within RETRY_WITHIN_MS (one record at most), the event trail and the
// maintained totals match the records, and on SQLite `PRAGMA integrity_check` is ok.
// CRASH_ROUNDS (default 3) and CRASH_SEEDS (default "1,2") set the length of the run.
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { figures } from './support/figures.ts';
import { json, type Reply } from './support/reply.ts';
import { afterProcessTests, processActor, startServer } from './support/server-process.ts';
import { freshStore, orgIn, type FreshStore } from './support/stores.ts';
import { eventsOf, readAll } from './support/reads.ts';

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 3);
const SEEDS = (process.env.CRASH_SEEDS ?? '1,2').split(',').map(Number);
const WORKERS = 4;
/** Writes each round acknowledges before its kill (the kill comes at a random moment after them). */
const MIN_ACKED_PER_ROUND = 10;
/** How long a round may take to acknowledge them before the test fails. */
const ACK_DEADLINE_MS = 15_000;
/** Within this long of a restart, a retry of a request the kill interrupted is answered normally. */
const RETRY_WITHIN_MS = 10_000;
const stores: FreshStore[] = [];

afterProcessTests(import.meta.filename, stores);

/** A small seeded generator (mulberry32), so a failing run can be replayed with its seed. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SIGKILL at random moments', () => {
  for (const seed of SEEDS) {
    it(`loses no acknowledged write (seed ${seed}, ${ROUNDS} rounds)`, async () => {
      const random = seeded(seed);
      const store = await freshStore(`crash${seed}`);
      stores.push(store);
      const env = { DATABASE_URL: store.url, RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000' };
      let server = await startServer(env);
      const port = server.port;
      const org = await orgIn(store.url, `Crash seed ${seed}`);
      const owner = processActor(() => server.base, org.org_id, org.live_token);
      const listId = json(await owner.call('POST', '/v1/lists', { body: { name: 'Crash list', type: 'contacts' } })).data.id;

      const acknowledged = new Map<string, Record<string, unknown>>();
      const unacknowledged = new Set<string>();
      const bodies = new Map<string, Record<string, unknown>>();
      let next = 0;

      for (let round = 1; round <= ROUNDS; round++) {
        if (round > 1) server = await startServer(env, { port });
        let stopping = false;
        let ackedThisRound = 0;
        const unexpected: string[] = [];
        const target = server;
        const worker = async () => {
          while (!stopping) {
            const key = `seed${seed}-write${next++}`;
            const body = { list_id: listId, name: key, title: `Title ${Math.floor(random() * 1e6)}`, work_email: `${key}@example.com`, tags: ['crash'] };
            bodies.set(key, body);
            let reply: Reply | undefined;
            try {
              figures.requests++;
              const res = await fetch(`${target.base}/v1/contacts`, {
                method: 'POST',
                headers: { authorization: `Bearer ${org.live_token}`, 'content-type': 'application/json', 'idempotency-key': key },
                body: JSON.stringify(body),
                signal: AbortSignal.timeout(5000),
              });
              reply = { status: res.status, headers: {}, body: await res.text() };
            } catch {
              reply = undefined; // the process died under the request
            }
            if (reply?.status === 201) {
              acknowledged.set(key, json(reply).data);
              ackedThisRound++;
            } else {
              unacknowledged.add(key);
              if (reply) unexpected.push(`${key} → ${reply.status} ${reply.body.slice(0, 200)}`);
            }
          }
        };
        const workers = Array.from({ length: WORKERS }, worker);
        const deadline = Date.now() + ACK_DEADLINE_MS;
        while (ackedThisRound < MIN_ACKED_PER_ROUND && unexpected.length === 0 && Date.now() < deadline) await sleep(5);
        await sleep(random() * 500);
        stopping = true;
        await server.stop('SIGKILL');
        await Promise.all(workers);
        figures.crashRounds++;
        expect(unexpected, `round ${round}: answers other than 201 or a lost connection`).toEqual([]);
        expect(ackedThisRound, `round ${round}: writes acknowledged before the kill`).toBeGreaterThanOrEqual(MIN_ACKED_PER_ROUND);
      }

      server = await startServer(env, { port });
      const restarted = Date.now();
      figures.acknowledgedRecords += acknowledged.size;

      // Every acknowledged record reads back exactly as acknowledged.
      let lost = 0;
      for (const [key, data] of acknowledged) {
        const reply = await owner.call('GET', `/v1/contacts/${data.id}`);
        if (reply.status !== 200 || JSON.stringify(json(reply).data) !== JSON.stringify(data)) {
          lost++;
          expect.soft(reply.body, `acknowledged ${key}`).toBe(JSON.stringify({ data }));
        }
      }
      figures.recordsLost += lost;
      expect(lost, 'acknowledged records lost').toBe(0);

      // No key made two records; a retried unacknowledged key yields at most one.
      const byName = async () => {
        const names = new Map<string, string[]>();
        for (const c of (await readAll(owner, `/v1/contacts?list_id=${listId}`)).items) names.set(c.name, [...(names.get(c.name) ?? []), c.id]);
        return names;
      };
      const before = await byName();
      for (const ids of before.values()) expect(ids.length).toBe(1);
      let slowest = 0;
      for (const key of unacknowledged) {
        const existing = before.get(key) ?? [];
        // A claim of the killed process answers 409 until its lease runs out, then the retry runs.
        let retry = await owner.call('POST', '/v1/contacts', { body: bodies.get(key), headers: { 'idempotency-key': key } });
        while (retry.status === 409 && Date.now() - restarted < RETRY_WITHIN_MS) {
          await sleep(100);
          retry = await owner.call('POST', '/v1/contacts', { body: bodies.get(key), headers: { 'idempotency-key': key } });
        }
        slowest = Math.max(slowest, Date.now() - restarted);
        expect(retry.status, `retry of ${key} within ${RETRY_WITHIN_MS} ms of the restart: ${retry.body}`).toBe(201);
        if (existing.length === 1) expect(json(retry).data.id, `retry of ${key} made a second record`).toBe(existing[0]);
      }
      console.log(`crash seed ${seed}: ${unacknowledged.size} unacknowledged keys retried, all answered within ${slowest} ms of the restart`);
      const after = await byName();
      for (const [name, ids] of after) expect(ids.length, `records named ${name}`).toBe(1);

      // The trail and the totals agree with the records.
      const contacts = await readAll(owner, '/v1/contacts');
      expect(contacts.total, 'maintained contact total').toBe(contacts.items.length);
      const created = (await eventsOf(owner, 'contact.created')).map((e) => e.data.object.id).sort();
      expect(created, 'one contact.created per contact').toEqual(contacts.items.map((c) => c.id).sort());
      const list = json(await owner.call('GET', `/v1/lists/${listId}`)).data;
      expect(list.member_count, 'list member count').toBe(contacts.items.length);

      await server.stop('SIGTERM');
      if (store.file) {
        const db = new DatabaseSync(store.file);
        try {
          expect(db.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
          expect(db.prepare('PRAGMA foreign_key_check').all()).toEqual([]);
        } finally {
          db.close();
        }
      }
    }, 60_000 + ROUNDS * 15_000);
  }
});
