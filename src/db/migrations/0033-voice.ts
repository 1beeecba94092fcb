// Voice: the numbers an organization calls from, the members who take calls (agents), dialer
// sessions over a list, and the calls they place. A session reads its list in contact order from a
// cursor (the contacts' list index), so picking the next contacts never scans the list; contacts to try
// again later (dropped when another call connected, or outside their calling hours) wait in
// dialer_queue until due. A contact is dialed once per pass and attempt (the unique index). Calls
// are found by the provider's id for its callbacks.
import type { Kysely } from 'kysely';
import type { Dialect } from '../database.ts';
import { columnTypes, createTenantTable } from '../migration-helpers.ts';

export function voice(dialect: Dialect) {
  const { big, json } = columnTypes(dialect);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createTenantTable(db, dialect, 'voice_numbers', (t) => t
        .addColumn('phone_number', 'text', (c) => c.notNull())
        .addColumn('connection_id', 'text')
        .addColumn('label', 'text'));
      await db.schema.createIndex('voice_numbers_number').unique().on('voice_numbers').columns(['org_id', 'mode', 'phone_number']).execute();

      await createTenantTable(db, dialect, 'voice_agents', (t) => t
        .addColumn('member_id', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('phone', 'text')
        .addColumn('current_call_id', 'text'));
      await db.schema.createIndex('voice_agents_member').unique().on('voice_agents').columns(['org_id', 'mode', 'member_id']).execute();

      await createTenantTable(db, dialect, 'dialer_sessions', (t) => t
        .addColumn('list_id', 'text', (c) => c.notNull())
        .addColumn('agent_id', 'text', (c) => c.notNull())
        .addColumn('number_id', 'text', (c) => c.notNull())
        .addColumn('parallel_lines', 'integer', (c) => c.notNull())
        .addColumn('calling_window', json, (c) => c.notNull())
        .addColumn('script', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('pass', 'integer', (c) => c.notNull())
        .addColumn('cursor', 'text')
        .addColumn('exhausted', 'integer', (c) => c.notNull())
        .addColumn('skipped', json, (c) => c.notNull())
        .addColumn('started_at', big)
        .addColumn('completed_at', big));
      await db.schema.createIndex('dialer_sessions_agent').on('dialer_sessions').columns(['org_id', 'mode', 'agent_id', 'status']).execute();

      await createTenantTable(db, dialect, 'dialer_queue', (t) => t
        .addColumn('session_id', 'text', (c) => c.notNull())
        .addColumn('contact_id', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('due_at', big, (c) => c.notNull()));
      await db.schema.createIndex('dialer_queue_due').on('dialer_queue').columns(['org_id', 'mode', 'session_id', 'due_at', 'id']).execute();
      await db.schema.createIndex('dialer_queue_contact').unique().on('dialer_queue').columns(['org_id', 'mode', 'session_id', 'contact_id']).execute();

      await createTenantTable(db, dialect, 'calls', (t) => t
        .addColumn('session_id', 'text')
        .addColumn('contact_id', 'text')
        .addColumn('agent_id', 'text')
        .addColumn('number_id', 'text')
        .addColumn('direction', 'text', (c) => c.notNull())
        .addColumn('from_number', 'text', (c) => c.notNull())
        .addColumn('to_number', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('connection_id', 'text')
        .addColumn('provider_call_id', 'text')
        .addColumn('answered_by', 'text')
        .addColumn('disposition', 'text')
        .addColumn('notes', 'text')
        .addColumn('transcript', 'text')
        .addColumn('error', 'text')
        .addColumn('pass', 'integer', (c) => c.notNull())
        .addColumn('attempt', 'integer', (c) => c.notNull())
        .addColumn('placing_at', big)
        .addColumn('ringing_at', big)
        .addColumn('answered_at', big)
        .addColumn('ended_at', big)
        .addColumn('duration', 'integer')
        .addColumn('last_update_at', big, (c) => c.notNull())
        .addColumn('dispositioned_at', big));
      await db.schema.createIndex('calls_session').on('calls').columns(['org_id', 'mode', 'session_id', 'status', 'id']).execute();
      await db.schema.createIndex('calls_once').unique().on('calls').columns(['org_id', 'mode', 'session_id', 'pass', 'contact_id', 'attempt']).execute();
      await db.schema.createIndex('calls_contact').on('calls').columns(['org_id', 'mode', 'contact_id', 'id']).execute();
      await db.schema.createIndex('calls_provider').on('calls').columns(['org_id', 'mode', 'provider_call_id']).execute();
    },
  };
}
