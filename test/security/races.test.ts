// Races inside one process: identical idempotent requests at once, concurrent updates of one
// record, concurrent creation of two companies with one domain, concurrent launches of one
// campaign, and bursts against the rate limit (small limits through the environment). On the
// PostgreSQL pass the limit is also raced by two app instances sharing one Redis.
import { afterAll, describe, expect, it } from 'vitest';
import { capturedLogs, isPostgres, redisUrl, testApp } from '../helpers/app.ts';
import { bodySchema, fill, guarded, loadApi, queryParams, type ApiRoute } from './support/api.ts';
import { freshOrg, type Actor } from './support/actors.ts';
import { bodyFor, FACTORIES, make, paramsFor } from './support/factories.ts';
import { figures, reportFigures } from './support/figures.ts';
import { mostAdmittedInAnyWindow, timed, type Timed } from './support/rate-window.ts';
import { eventsOf, readAll } from './support/reads.ts';
import { json } from './support/reply.ts';
import { branches, isReference } from './support/schema-values.ts';
import { expectNoSecretsInLogs } from './support/secrets.ts';

const WRITERS = Number(process.env.RACE_WRITERS ?? 8);
const UNLIMITED = { RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_PER_MINUTE: '100000000' };
const app = await testApp({ env: UNLIMITED });
const api = await loadApi(app);
const label = (r: ApiRoute) => `${r.method} ${r.url}`;
const closing: Array<{ close(): Promise<unknown> }> = [app];

afterAll(async () => {
  reportFigures(import.meta.filename, isPostgres() ? 'postgres' : 'sqlite');
  expectNoSecretsInLogs(capturedLogs);
  for (const a of closing) await a.close();
});

/** The number of objects a creation route has made, as its listing reports (paged or not). */
async function countOf(actor: Actor, route: ApiRoute): Promise<number> {
  const paged = queryParams(api.routes.find((r) => r.method === 'GET' && r.url === route.url) as ApiRoute).some((p) => p.name === 'limit');
  const body = json(await actor.call('GET', paged ? `${route.url}?limit=1` : route.url));
  return body.pagination?.total ?? body.data.total;
}

describe('one Idempotency-Key, many identical requests at once', () => {
  const creates = guarded(api).filter((r) => r.method === 'POST' && r.params.length === 0 && FACTORIES[r.url]);
  for (const route of creates) {
    it(`${label(route)} executes once`, async () => {
      const owner = (await freshOrg(app, 'I')).live;
      const body = await bodyFor(api, owner, route);
      const before = await countOf(owner, route);
      const replies = await Promise.all(Array.from({ length: WRITERS }, () =>
        owner.call('POST', route.url, { body, headers: { 'idempotency-key': 'race-1' } })));
      const executed = replies.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
      expect(executed.length, replies.map((r) => `${r.status} ${r.body.slice(0, 80)}`).join('\n')).toBe(1);
      for (const r of replies) {
        expect([201, 409].includes(r.status), `${r.status} ${r.body}`).toBe(true);
        if (r.status === 201) expect(r.body).toBe(executed[0].body);
      }
      expect(await countOf(owner, route)).toBe(before + 1);
      const again = await owner.call('POST', route.url, { body, headers: { 'idempotency-key': 'race-1' } });
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(executed[0].body);
    });
  }
});

const PHONE_FIELDS = new Set(['phone', 'phone_number']);
const REGIONS = ['GB', 'US', 'DE', 'FR', 'ES', 'IT', 'NL', 'SE', 'NO', 'DK', 'FI', 'PL'];

/** A body that sets every plain field of an update to writer `n`'s own value. */
function writerBody(route: ApiRoute, n: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, schema] of Object.entries<Record<string, unknown>>(bodySchema(api, route)!.properties ?? {})) {
    if (isReference(field)) continue;
    const string = branches(schema).find((b) => b.type === 'string' && !b.enum && (!b.pattern || String(b.pattern).startsWith('^[^\\u0000')));
    const list = branches(schema).find((b) => b.type === 'array' && b.items?.type === 'string' && !b.items.enum && (!b.items.pattern || String(b.items.pattern).startsWith('^[^\\u0000')));
    // Phone numbers are stored in E.164, regions are country codes: each writer's own valid one.
    if (string && PHONE_FIELDS.has(field)) out[field] = `+4420794601${String(n % 100).padStart(2, '0')}`;
    else if (string && field === 'phone_region') out[field] = REGIONS[n % REGIONS.length];
    else if (string?.format === 'email') out[field] = `writer${n}.${field}@example.com`;
    else if (string && !string.format && (string.maxLength ?? 100) >= 12 && field !== 'domain') out[field] = `writer ${n} ${field}`.slice(0, Number(string.maxLength ?? 100));
    else if (list) out[field] = [`writer-${n}`];
  }
  return out;
}

describe('concurrent updates of one record', () => {
  // Records read back by a GET of their own URL; a pipeline's stages are read (and their updates
  // recorded) through their pipeline, whose own PATCH is raced here.
  const readable = (r: { url: string }) => guarded(api).some((g) => g.method === 'GET' && g.url === r.url);
  // A PATCH whose body only names a state to move to (an enrollment's `{status}`) has no fields to
  // race on: its moves are the lifecycle's, walked in test/platform/lifecycles.test.ts.
  const movesOnly = (r: ApiRoute) => Object.keys(writerBody(r, 0)).length === 0 && Object.keys(bodySchema(api, r)!.properties ?? {}).join() === 'status';
  const updates = guarded(api).filter((r) => r.method === 'PATCH' && bodySchema(api, r) && readable(r) && !movesOnly(r));
  for (const route of updates) {
    it(`${label(route)}: the last writer wins whole, and each accepted update has its event`, async () => {
      const owner = (await freshOrg(app, 'U')).live;
      const params = await paramsFor(api, owner, route);
      const url = fill(route.url, params);
      const bodies = Array.from({ length: WRITERS }, (_, n) => writerBody(route, n));
      expect(Object.keys(bodies[0]).length, 'fields the writers race on').toBeGreaterThanOrEqual(1);
      const replies = await Promise.all(bodies.map((body) => owner.call('PATCH', url, { body })));
      const accepted = replies.filter((r) => r.status === 200);
      expect(accepted.length, replies.map((r) => `${r.status} ${r.body.slice(0, 100)}`).join('\n')).toBeGreaterThanOrEqual(1);
      for (const r of replies) expect([200, 409].includes(r.status), `${r.status} ${r.body}`).toBe(true);
      const final = json(await owner.call('GET', url)).data;
      const winner = bodies.findIndex((body) => Object.entries(body).every(([k, v]) => JSON.stringify(final[k]) === JSON.stringify(v)));
      expect(winner, `final state mixes writers: ${JSON.stringify(final)}`).toBeGreaterThanOrEqual(0);
      const acknowledged = accepted.map((r) => json(r).data);
      for (const field of Object.keys(acknowledged[0])) expect(final[field], `field ${field} lost`).not.toBeUndefined();
      // The final state is one of the acknowledged ones, and the trail has one update per writer.
      expect(acknowledged.some((a) => JSON.stringify({ ...a }) === JSON.stringify({ ...final }))).toBe(true);
      // A record of its own URL (the organization's) has no id in the URL: its events name it by the one it reads back with.
      const recordId = params.id ?? final.id;
      const updated = (await readAll(owner, '/v1/events')).items.filter((e) => e.type.endsWith('.updated') && e.data.object.id === recordId);
      expect(updated.length, `update events of ${recordId}`).toBe(accepted.length);
      // Events name their object by `id`, also where the record's own identifier is another field (api_key_id).
      const { id, ...fields } = updated[0].data.object;
      expect(final.id === undefined ? fields : { id, ...fields }, 'the newest event holds the final state').toEqual(final);
    });
  }
});

describe('uniqueness under concurrency', () => {
  it('creates exactly one of many concurrent companies with one domain', async () => {
    const owner = (await freshOrg(app, 'D')).live;
    const domains = ['race.example.com', 'RACE.example.com', 'race.EXAMPLE.com', 'Race.Example.Com'];
    const replies = await Promise.all(Array.from({ length: WRITERS }, (_, n) =>
      owner.call('POST', '/v1/companies', { body: { name: `Company ${n}`, domain: domains[n % domains.length] } })));
    const created = replies.filter((r) => r.status === 201);
    expect(created.length, replies.map((r) => `${r.status} ${r.body.slice(0, 100)}`).join('\n')).toBe(1);
    const id = json(created[0]).data.id;
    for (const r of replies.filter((x) => x.status !== 201)) {
      expect(r.status, r.body).toBe(409);
      expect(json(r).detail).toContain(id);
    }
    const listed = json(await owner.call('GET', '/v1/companies?domain=race.example.com'));
    expect(listed.pagination.total).toBe(1);
    expect((await eventsOf(owner, 'company.created')).length).toBe(1);
  });

  it('launches a campaign once under concurrent launches, with one sequence and one launch event', async () => {
    const owner = (await freshOrg(app, 'L')).live;
    const { id: listId } = await make(api, owner, '/v1/lists');
    for (let i = 0; i < 3; i++) expect((await owner.call('POST', '/v1/contacts', { body: { list_id: listId, name: `Member ${i}` } })).status).toBe(201);
    const { id: mailboxId } = await make(api, owner, '/v1/mailboxes');
    // Due a day after the launch: what is raced is the launch alone.
    const steps = [{ channel: 'email', delay_days: 1, subject: 'Hi', body: 'Hello' }];
    const campaign = json(await owner.call('POST', '/v1/campaigns', { body: { name: 'Race launch', list_id: listId, mailbox_ids: [mailboxId], steps } })).data;
    const replies = await Promise.all(Array.from({ length: WRITERS }, () => owner.call('POST', `/v1/campaigns/${campaign.id}/launch`, { body: { force: true } })));
    const launched = replies.filter((r) => r.status === 200);
    expect(launched.length, replies.map((r) => `${r.status} ${r.body.slice(0, 100)}`).join('\n')).toBe(1);
    for (const r of replies.filter((x) => x.status !== 200)) {
      expect(r.status, r.body).toBe(409);
      expect(json(r).detail).toBe('A campaign that is active cannot be launched');
    }
    const made = (await readAll(owner, '/v1/sequences')).items.filter((q) => q.campaign_id === campaign.id);
    expect(made.map((q) => q.id)).toEqual([json(launched[0]).data.sequence_id]);
    expect((await readAll(owner, `/v1/sequences/${made[0].id}/enrollments`)).items).toHaveLength(3);
    expect((await eventsOf(owner, 'campaign.launched')).filter((e) => e.data.object.id === campaign.id).length).toBe(1);
    expect(json(launched[0]).data.audience_count).toBe(3);
  });
});

/** Sends bursts of `burst` requests every `gapMs` for `forMs`, as the org of `token`. */
async function hammer(apps: Array<{ inject: typeof app.inject }>, token: string, burst: number, gapMs: number, forMs: number): Promise<Timed[]> {
  const results: Array<Promise<Timed>> = [];
  const end = Date.now() + forMs;
  let n = 0;
  while (Date.now() < end) {
    for (let i = 0; i < burst; i++) {
      const target = apps[n++ % apps.length];
      figures.requests++;
      results.push(timed(async () => {
        const res = await target.inject({ method: 'GET', url: '/v1/lists?limit=1', headers: { authorization: `Bearer ${token}` } });
        if (res.statusCode === 429) {
          expect(res.headers['retry-after']).toMatch(/^\d+$/);
          expect(res.json().detail).toMatch(/rate limit/i);
        } else expect(res.statusCode).toBe(200);
        return { status: res.statusCode };
      }));
    }
    await new Promise((r) => setTimeout(r, gapMs));
  }
  return Promise.all(results);
}

describe('rate limits under concurrent load', () => {
  it('never lets more than the per-second or per-minute limit through (small limits)', async () => {
    const limited = await testApp({ env: { RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_PER_MINUTE: '12' } });
    closing.push(limited);
    const org = await freshOrg(limited, 'R');
    const results = await hammer([limited], org.live.token, 6, 120, 3200);
    const passed = results.filter((r) => r.status !== 429).length;
    expect(mostAdmittedInAnyWindow(results, 1000)).toBeLessThanOrEqual(5);
    expect(passed, 'at most the minute budget in the whole run').toBeLessThanOrEqual(12);
    expect(passed, 'the limiter let the budget through').toBeGreaterThanOrEqual(10);
  });

  it('never lets more than 50 through in any second at the spec\'s limits', async () => {
    const limited = await testApp();
    closing.push(limited);
    const org = await freshOrg(limited, 'S');
    const results = await hammer([limited], org.live.token, 40, 100, 2500);
    expect(mostAdmittedInAnyWindow(results, 1000)).toBeLessThanOrEqual(50);
    expect(results.filter((r) => r.status !== 429).length).toBeGreaterThanOrEqual(100);
  });

  it.runIf(isPostgres())('shares one budget between two app instances on one Redis', async () => {
    const env = { REDIS_URL: redisUrl(), RATE_LIMIT_PER_SECOND: '5', RATE_LIMIT_PER_MINUTE: '12' };
    const [one, two] = [await testApp({ env }), await testApp({ env })];
    closing.push(one, two);
    const org = await freshOrg(one, 'R');
    const warmUp = await hammer([one, two], org.live.token, 1, 50, 300); // both connected to Redis
    const results = [...warmUp, ...(await hammer([one, two], org.live.token, 6, 120, 3000))];
    const passed = results.filter((r) => r.status !== 429).length;
    expect(mostAdmittedInAnyWindow(results, 1000)).toBeLessThanOrEqual(5);
    expect(passed).toBeLessThanOrEqual(12);
    expect(passed).toBeGreaterThanOrEqual(6);
  });
});
