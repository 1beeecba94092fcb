// Polling IMAP mailboxes into the inbox, against Debian's Dovecot (test/peers/dovecot.peer.ts): new
// messages are recorded once however often the mailbox is polled, a mailbox whose UIDVALIDITY
// changed is read again without recording anything twice, and a server that never answers, or
// refuses the login, leaves its error on the connection's cursor instead of hanging the poll; the
// next poll is scheduled either way. The sweep starts the polls of connections that have none.
import { createServer, type Server, type Socket } from 'node:net';
import { ImapFlow } from 'imapflow';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { imapPollSweep } from '../../src/resources/inbox/inbox.jobs.ts';
import { pollKey } from '../../src/resources/inbox/imap-poll.ts';
import { tenant, testApp } from '../helpers/app.ts';
import { emailConnection, rawMail, uniqueId } from '../helpers/inbox.ts';
import { ok, type Json } from '../helpers/records.ts';
import { waitFor } from '../helpers/wait.ts';
import { DOVECOT_PASSWORD } from '../peers/dovecot.peer.ts';

const address = inject('peers').dovecot;
const imap = address ? new URL(address) : undefined;
const app = await testApp({ env: { RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000', IMAP_TIMEOUT_MS: '5000' } });
afterAll(() => app.close());

/** A client of the peer, as a mail server's other users would fill the mailbox. */
async function mailboxClient(): Promise<ImapFlow> {
  const client = new ImapFlow({ host: imap!.hostname, port: Number(imap!.port), secure: false, auth: { user: 'inbox', pass: DOVECOT_PASSWORD }, logger: false });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

async function append(box: string, raws: string[]): Promise<void> {
  const client = await mailboxClient();
  try {
    for (const raw of raws) await client.append(box, raw);
  } finally {
    await client.logout();
  }
}

/** Deletes the mailbox and makes it again: the server gives it a new UIDVALIDITY. */
async function recreate(box: string): Promise<void> {
  const client = await mailboxClient();
  try {
    await client.mailboxDelete(box);
    await client.mailboxCreate(box);
  } finally {
    await client.logout();
  }
}

async function setup(settings: Record<string, unknown>, credentials?: { username: string; password: string }) {
  const t = await tenant(app, { sandbox: false });
  const id = await emailConnection(t.live, settings, credentials);
  return { t, c: t.live, id };
}

const state = (c: Json, id: string) => ok(c.get(`/v1/connections/${id}/poll`));

/** Polls now and waits until the poll has ended (its time moved past `after`). */
async function pollNow(c: Json, id: string): Promise<Json> {
  const before = (await state(c, id)).last_polled_at ?? 0;
  await ok(c.post(`/v1/connections/${id}/poll`), 202);
  return waitFor(() => state(c, id), (s) => (s.last_polled_at ?? 0) > before || (s.last_error_at ?? 0) > before, 60_000, 100);
}

const messagesOf = async (c: Json): Promise<Json[]> => {
  const threads = await ok(c.get('/v1/inbox?limit=200'));
  const full = await Promise.all(threads.map((x: Json) => ok(c.get(`/v1/inbox/${x.id}`))));
  return full.flatMap((x) => x.messages);
};

describe.skipIf(!imap)('polling an IMAP mailbox (Dovecot)', () => {
  it('records new messages once, however often the mailbox is polled, and reads a mailbox of a new UIDVALIDITY again without doubles', async () => {
    const box = `Poll-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const client = await mailboxClient();
    await client.mailboxCreate(box);
    await client.logout();
    const mails = [rawMail({ subject: 'One', messageId: uniqueId() }), rawMail({ from: 'carol@example.net', subject: 'Two', messageId: uniqueId() })];
    await append(box, mails);
    const s = await setup({ host: imap!.hostname, port: Number(imap!.port), secure: false, mailbox: box });
    // Sleep 1 s between polls: a poll's time is in seconds.
    const first = await pollNow(s.c, s.id);
    expect(first).toMatchObject({ mailbox: box, last_uid: 2, last_error: null, messages_recorded: 2 });
    expect((await messagesOf(s.c)).map((m) => [m.subject, m.source]).sort()).toEqual([['One', 'imap'], ['Two', 'imap']]);

    await new Promise((resolve) => setTimeout(resolve, 1100));
    const third = rawMail({ from: 'dora@example.net', subject: 'Three', messageId: uniqueId() });
    await append(box, [third]);
    const second = await pollNow(s.c, s.id);
    expect(second).toMatchObject({ last_uid: 3, messages_recorded: 3, uid_validity: first.uid_validity });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await pollNow(s.c, s.id)).toMatchObject({ last_uid: 3, messages_recorded: 3 });
    expect(await messagesOf(s.c)).toHaveLength(3);

    // The mailbox is made again: new UIDs for the same messages, and one new one.
    await recreate(box);
    await append(box, [...mails, third, rawMail({ from: 'erin@example.net', subject: 'Four', messageId: uniqueId() })]);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const after = await pollNow(s.c, s.id);
    expect(after.uid_validity).not.toBe(first.uid_validity);
    expect(after).toMatchObject({ last_uid: 4, messages_recorded: 4, last_error: null });
    const messages = await messagesOf(s.c);
    expect(messages.map((m) => m.subject).sort()).toEqual(['Four', 'One', 'Three', 'Two']);
    expect(new Set(messages.map((m) => m.message_id)).size).toBe(4);
    // The next poll is scheduled.
    const next = await app.services.database.db.selectFrom('jobs').select(['status', 'run_at']).where('org_id', '=', s.t.org_id).where('schedule_key', '=', pollKey(s.id)).execute();
    expect(next.some((j) => j.status === 'queued')).toBe(true);
  });

  it('records the error of a server that accepts and never greets, without hanging, and schedules the next poll', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as { port: number }).port;
      const s = await setup({ host: '127.0.0.1', port, secure: false });
      const started = Date.now();
      const polled = await pollNow(s.c, s.id);
      expect(polled.last_error).toMatch(/time/i);
      expect(polled.last_error_at).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(45_000);
      expect(sockets.size).toBeGreaterThan(0);
      const next = await app.services.database.db.selectFrom('jobs').select('status').where('org_id', '=', s.t.org_id).where('schedule_key', '=', pollKey(s.id)).execute();
      expect(next.map((j) => j.status)).toContain('queued');
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it('polls a connection as soon as it is made, recording a refused login on its cursor; a test-mode connection is never polled', async () => {
    const s = await setup({ host: imap!.hostname, port: Number(imap!.port), secure: false }, { username: 'inbox', password: 'wrong' });
    // No poll asked for: the connection's first poll came with its creation.
    const polled = await waitFor(() => state(s.c, s.id), (x) => x.last_error !== null, 60_000, 100);
    expect(polled.last_error).toBe('The IMAP server refused the username or password');
    expect(await ok(s.c.get('/v1/inbox'))).toEqual([]);
    const sandboxed = await emailConnection(s.t.test, { host: imap!.hostname, port: Number(imap!.port), secure: false });
    const jobs = await app.services.database.db.selectFrom('jobs').select('id').where('org_id', '=', s.t.org_id).where('mode', '=', 'test').where('schedule_key', '=', pollKey(sandboxed)).execute();
    expect(jobs).toEqual([]);
    expect(await ok(s.t.test.post(`/v1/connections/${sandboxed}/poll`), 202)).toMatchObject({ queued: true });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await state(s.t.test, sandboxed)).toMatchObject({ last_polled_at: null, last_error: null });
  });
});

describe('the poll sweep', () => {
  it('gives each live connection with IMAP settings one waiting poll, and no more when run again', async () => {
    const s = await setup({ host: '127.0.0.1', port: 9, secure: false });
    const without = await emailConnection(s.c);
    const ctx = { database: app.services.database } as Parameters<typeof imapPollSweep.run>[1];
    await imapPollSweep.run({}, ctx);
    await imapPollSweep.run({}, ctx);
    const jobs = await app.services.database.db.selectFrom('jobs').select(['schedule_key', 'status']).where('org_id', '=', s.t.org_id).where('kind', '=', 'inbox.imap_poll').execute();
    const keys = jobs.map((j) => j.schedule_key);
    expect(keys.filter((k) => k === pollKey(s.id)).length).toBeGreaterThanOrEqual(1);
    expect(jobs.filter((j) => j.schedule_key === pollKey(s.id) && j.status === 'queued').length).toBeLessThanOrEqual(1);
    expect(keys).not.toContain(pollKey(without));
  });
});
