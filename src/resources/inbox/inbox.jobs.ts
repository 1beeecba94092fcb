// The inbox's background work: each connection's IMAP poll (a job per connection that schedules its
// successor, imap-poll.ts; the first comes with the connection's creation, inbox.fanout.ts), the
// sweep that starts the polls of connections that have none waiting (one whose chain broke: a poll
// that died of store failures), and the wake-up of snoozed threads.
import { sql } from 'kysely';
import type { Mode } from '../../db/schema.ts';
import { defineJobKind } from '../../platform/jobs/kinds.ts';
import { nowMillis } from '../../platform/clock.ts';
import { runAction } from '../../platform/resource/lifecycle.ts';
import { findRow } from '../../platform/resource/store.ts';
import { secretOf } from '../../platform/secret.ts';
import { runWrite } from '../../platform/write.ts';
import { inbox } from './inbox.resource.ts';
import { WAKE } from './inbox.lifecycle.ts';
import { IMAP_POLL, pollConnection, pollKey } from './imap-poll.ts';

export const imapPoll = defineJobKind<{ connection_id: string }>({
  ...IMAP_POLL,
  async run({ connection_id }, { database, config, job }) {
    const secret = await secretOf(database.db, config.secretKey);
    await pollConnection({ database, config, secret }, { orgId: job.orgId, mode: job.mode as Mode }, connection_id);
  },
});

/**
 * Every live e-mail connection with IMAP settings and no poll waiting gets one, due now: one
 * statement, whose conflict with the waiting poll of a connection (the unique index of waiting keyed
 * jobs) leaves that one alone. Test mode never reaches outside, so its connections are left out.
 */
export const imapPollSweep = defineJobKind<Record<string, never>>({
  name: 'inbox.imap_poll_sweep',
  async run(_payload, { database }) {
    const now = nowMillis();
    const hasImap = database.dialect === 'postgres' ? sql`c.settings -> 'imap' is not null` : sql`json_extract(c.settings, '$.imap') is not null`;
    const key = sql`${pollKey('')} || c.id`;
    await sql`insert into jobs (org_id, mode, id, kind, payload, concurrency_key, status, run_at, attempts, max_attempts,
        lease_until, lease_token, last_error, created_at, updated_at, schedule_key)
      select c.org_id, c.mode, 'job_imap_' || c.id || '_' || ${String(now)}, ${IMAP_POLL.name}, '{"connection_id":"' || c.id || '"}', null, 'queued',
        ${now}, 0, ${IMAP_POLL.maxAttempts}, null, null, null, ${now}, ${now}, ${key}
      from connections c
      where c.mode = 'live' and c.kind = 'email' and ${hasImap}
        and not exists (select 1 from jobs j where j.org_id = c.org_id and j.mode = c.mode and j.schedule_key = ${key})
      on conflict do nothing`.execute(database.db);
  },
});

/** A snoozed thread whose time has come is open again (unless it moved meanwhile, or was snoozed anew). */
export const wakeThread = defineJobKind<{ thread_id: string }>({
  ...WAKE,
  async run({ thread_id }, { database, job }) {
    await runWrite(database, { orgId: job.orgId, mode: job.mode as Mode }, async (w) => {
      const row = await findRow(inbox, w.tx, w.dialect, w.scope, thread_id);
      if (!row || row.status !== 'snoozed' || Number(row.snoozed_until) > w.now) return;
      await runAction(inbox, w, row, 'wake');
    });
  },
});
