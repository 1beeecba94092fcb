// Starts the IMAP polls of live e-mail connections as they are made or given IMAP settings: the
// connection's poll, due now, written with the write that made it (a consumer of its events, like
// webhook deliveries), so a connection never waits for the sweep. A poll already waiting is kept.
import { sql } from 'kysely';
import { nowMillis } from '../../platform/clock.ts';
import type { DeferredStatement, EventWrite, PendingEvent } from '../../platform/write.ts';
import { jobRow } from '../../platform/write/jobs.ts';
import { IMAP_POLL, pollKey } from './imap-poll.ts';

const CONNECTION_EVENTS = new Set(['connection.created', 'connection.updated']);

/** Whether the event's connection is an e-mail one with IMAP settings. */
function pollsImap(event: PendingEvent): boolean {
  const { object } = JSON.parse(event.data) as { object?: { kind?: string; settings?: { imap?: unknown } } };
  return object?.kind === 'email' && typeof object.settings?.imap === 'object' && object.settings.imap !== null;
}

export function imapPollStarter(w: EventWrite, events: readonly PendingEvent[]): DeferredStatement | undefined {
  // Test mode never reaches outside: its connections are not polled.
  if (w.scope.mode !== 'live') return undefined;
  const ids = [...new Set(events.filter((e) => CONNECTION_EVENTS.has(e.type) && pollsImap(e)).map((e) => e.object_id))];
  if (ids.length === 0) return undefined;
  const now = nowMillis();
  const rows = ids.map((id) => jobRow(w.scope, IMAP_POLL, { connection_id: id }, { runAt: now }, pollKey(id)));
  // The index's own predicate, as text: PostgreSQL infers a partial index only from the same expression.
  return w.tx.insertInto('jobs').values(rows).onConflict((oc) => oc.columns(['org_id', 'mode', 'schedule_key'])
    .where(sql<boolean>`schedule_key is not null and status in ('queued', 'failed')`).doNothing());
}
