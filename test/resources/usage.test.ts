// The credit ledger through HTTP: the starting grant, debits of the messages campaigns send, this
// month's summary, filters and paging, and grants added with the CLI. The campaigns send in test mode
// (the local driver, at once); their credits are debited by the run of the scheduler that queues them.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseUrl, isPostgres, tenant, testApp, type Client } from '../helpers/app.ts';
import { waitFor } from '../helpers/wait.ts';

const env = { RATE_LIMIT_PER_SECOND: '10000', RATE_LIMIT_PER_MINUTE: '100000' };
let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp({ env });
});
afterAll(() => app.close());

interface Txn { id: string; type: string; amount: number; balance_after: number; operation: string; resource_id: string | null; description: string | null; created_at: number }

const debitsOf = async (c: Client) => (await c.get('/v1/usage/transactions?type=debit')).json().pagination.total as number;

/**
 * Launches `n` campaigns of one e-mail step, each to `size` contacts, and waits for each one's
 * messages to be sent (one debit each) before the next; returns their ids in launch order.
 */
async function launchCampaigns(c: Client, n: number, size = 1): Promise<string[]> {
  const list = (await c.post('/v1/lists', { name: 'Audience', type: 'contacts' })).json().data.id;
  for (let i = 0; i < size; i++) await c.post('/v1/contacts', { list_id: list, work_email: `p${i}@usage.example` });
  const mailbox = (await c.post('/v1/mailboxes', { email: 'sender@usage.example' })).json().data.id;
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = (await c.post('/v1/campaigns', { name: `Campaign ${i}`, list_id: list, mailbox_ids: [mailbox], steps: [{ channel: 'email', subject: 'Hello', body: 'Hi' }] })).json().data.id;
    const res = await c.post(`/v1/campaigns/${id}/launch`, { force: true });
    expect(res.statusCode, res.body).toBe(200);
    await waitFor(() => debitsOf(c), (n) => n === i + 1);
    ids.push(id);
  }
  return ids;
}

/** A fresh organization's test mode, without the sandbox data: its ledger holds the starting grant only. */
const ledgerOf = async () => {
  const t = await tenant(app, { sandbox: false });
  return { c: t.test, other: t.live };
};

function monthNow() {
  const now = new Date();
  return { start: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) / 1000, end: Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000 };
}

describe('usage', () => {
  it('starts a new organization with the default grant in each mode', async () => {
    const t = await tenant(app);
    const res = await t.live.get('/v1/usage');
    expect(res.statusCode).toBe(200);
    const { start, end } = monthNow();
    expect(res.json()).toEqual({ data: { balance: 1000, period_start: start, period_end: end, granted: 1000, debited: 0, refunded: 0, transactions: 1 } });
    const now = Date.now() / 1000;
    expect(start).toBeLessThanOrEqual(now);
    expect(end).toBeGreaterThan(now);

    const list = (await t.live.get('/v1/usage/transactions')).json();
    expect(list.pagination).toMatchObject({ page: 1, limit: 50, total: 1, has_next: false, next_cursor: null });
    expect(list.data).toHaveLength(1);
    const [grant] = list.data as Txn[];
    expect(grant).toMatchObject({ type: 'grant', amount: 1000, balance_after: 1000, operation: 'grant', resource_id: null, description: 'Starting credits' });
    expect(grant.id).toMatch(/^txn_/);
    expect(Math.abs(grant.created_at - now)).toBeLessThan(60);

    const testGrants = (await t.test.get('/v1/usage/transactions?type=grant')).json().data as Txn[];
    expect(testGrants.some((g) => g.amount === 1000 && g.description === 'Starting credits')).toBe(true);
  });

  it('lists debits newest first with a running balance, and sums this month', async () => {
    const { c, other: live } = await ledgerOf();
    const campaigns = await launchCampaigns(c, 3, 2);
    const body = (await c.get('/v1/usage/transactions')).json();
    const txns = body.data as Txn[];
    expect(body.pagination.total).toBe(4);
    expect(txns.map((x) => x.type)).toEqual(['debit', 'debit', 'debit', 'grant']);
    expect(txns.map((x) => x.resource_id)).toEqual([...[...campaigns].reverse(), null]);
    expect(txns.map((x) => x.balance_after)).toEqual([994, 996, 998, 1000]);
    for (const [i, d] of txns.slice(0, 3).entries()) expect(d).toMatchObject({ amount: 2, operation: 'campaign.send', description: `Campaign "Campaign ${2 - i}": 2 messages sent` });

    const usage = (await c.get('/v1/usage')).json().data;
    expect(usage).toMatchObject({ balance: 994, granted: 1000, debited: 6, refunded: 0, transactions: 4 });

    // The other mode and other organizations keep their own ledgers.
    const liveLedger = (await live.get('/v1/usage/transactions?limit=200')).json().data as Txn[];
    expect(liveLedger.filter((x) => campaigns.includes(x.resource_id ?? ''))).toEqual([]);
    const other = await tenant(app);
    expect((await other.live.get('/v1/usage')).json().data).toMatchObject({ balance: 1000, debited: 0, transactions: 1 });
  });

  it('filters by type with exact totals', async () => {
    const { c } = await ledgerOf();
    await launchCampaigns(c, 2);
    const of = async (type: string) => {
      const body = (await c.get(`/v1/usage/transactions?type=${type}`)).json();
      expect(body.pagination.total, type).toBe(body.data.length);
      expect(body.data.every((x: Txn) => x.type === type), type).toBe(true);
      return body.data.length;
    };
    expect(await of('debit')).toBe(2);
    expect(await of('grant')).toBe(1);
    expect(await of('refund')).toBe(0);
    const bad = await c.get('/v1/usage/transactions?type=charge');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toMatch(/type/);
    const unknown = await c.get('/v1/usage/transactions?kind=debit');
    expect(unknown.statusCode).toBe(422);
  });

  it('pages through the ledger by cursor and by page number', async () => {
    const { c } = await ledgerOf();
    await launchCampaigns(c, 4);
    const all = ((await c.get('/v1/usage/transactions?limit=200')).json().data as Txn[]).map((x) => x.id);
    expect(all).toHaveLength(5);
    expect([...all].sort().reverse()).toEqual(all);

    const walked: string[] = [];
    let url = '/v1/usage/transactions?limit=2';
    for (let pages = 0; ; pages++) {
      const body = (await c.get(url)).json();
      expect(body.pagination.total).toBe(5);
      walked.push(...body.data.map((x: Txn) => x.id));
      if (!body.pagination.has_next) {
        expect(pages).toBe(2);
        break;
      }
      url = `/v1/usage/transactions?limit=2&cursor=${encodeURIComponent(body.next_cursor)}`;
    }
    expect(walked).toEqual(all);

    const byPage: string[] = [];
    for (const page of [1, 2]) {
      const body = (await c.get(`/v1/usage/transactions?type=debit&limit=3&page=${page}`)).json();
      expect(body.pagination).toMatchObject({ page, total: 4, has_next: page === 1 });
      byPage.push(...body.data.map((x: Txn) => x.id));
    }
    expect(byPage).toEqual(all.slice(0, 4));

    const other = await tenant(app);
    const first = (await c.get('/v1/usage/transactions?limit=2')).json();
    const foreign = await other.test.get(`/v1/usage/transactions?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`);
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().type).toBe('bad_request');
  });

  it('adds credits with `orgs grant` from the CLI', async () => {
    // The CLI is another process, so the store must be one both can open.
    const file = join(tmpdir(), `usage-cli-${process.pid}-${Date.now()}.db`);
    const url = isPostgres() ? databaseUrl() : `sqlite:${file}`;
    const shared = await testApp({ env: { ...env, DATABASE_URL: url } });
    const cli = (...args: string[]) => promisify(execFile)(process.execPath, ['src/cli.ts', ...args], { env: { ...process.env, DATABASE_URL: url } })
      .then((r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }), (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }));
    try {
      const t = await tenant(shared);
      const granted = await cli('orgs', 'grant', '--org', t.org_id, '--credits', '250');
      expect(granted.code, granted.stderr).toBe(0);
      expect(JSON.parse(granted.stdout)).toMatchObject({ type: 'grant', amount: 250, balance_after: 1250 });

      expect((await t.live.get('/v1/usage')).json().data).toMatchObject({ balance: 1250, granted: 1250, transactions: 2 });
      const [latest] = (await t.live.get('/v1/usage/transactions')).json().data as Txn[];
      expect(latest).toMatchObject({ type: 'grant', amount: 250, balance_after: 1250, description: 'Granted by an administrator' });

      const testMode = await cli('orgs', 'grant', '--org', t.org_id, '--credits', '5', '--mode', 'test');
      expect(testMode.code, testMode.stderr).toBe(0);
      const [testLatest] = (await t.test.get('/v1/usage/transactions?type=grant')).json().data as Txn[];
      expect(testLatest).toMatchObject({ amount: 5, description: 'Granted by an administrator' });
      expect((await t.live.get('/v1/usage')).json().data.balance).toBe(1250);

      for (const args of [['--credits', '0'], ['--credits=-3'], ['--credits', 'ten']]) {
        const refused = await cli('orgs', 'grant', '--org', t.org_id, ...args);
        expect(refused.code, args.join(' ')).toBe(2);
        expect(refused.stderr).toMatch(/--credits must be a positive whole number/);
      }
      const unknown = await cli('orgs', 'grant', '--org', 'org_missing', '--credits', '5');
      expect(unknown.code).toBe(2);
      expect((await t.live.get('/v1/usage')).json().data.transactions).toBe(2);
    } finally {
      await shared.close();
      if (!isPostgres()) for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
    }
  });
});
