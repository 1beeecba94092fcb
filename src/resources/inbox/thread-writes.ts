// Writes of a thread beyond the kernel's own: fields the API does not write directly (the assignee,
// the tags), and the thread's counts when a message comes in or a reply goes out, each recorded as
// `thread.updated` with the earlier values.
import { sql } from 'kysely';
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import { applyUpdate, getRow, presentOne } from '../../platform/resource/store.ts';
import { storeJson } from '../../platform/resource/stored-json.ts';
import { selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { inbox } from './inbox.resource.ts';

/** Sets fields through the kernel's update; values the thread already holds change nothing. */
export async function setFields(w: WriteContext, id: string, values: Record<string, unknown>): Promise<ApiRecord> {
  const before = await getRow(inbox, w.tx, w.dialect, w.scope, id);
  const old = await presentOne(inbox, w.tx, w.scope, before);
  const changed = Object.entries(values).some(([name, value]) => JSON.stringify(old[name]) !== JSON.stringify(value));
  return changed ? applyUpdate(inbox, w, before, old, values) : old;
}

const threadRow = async (w: WriteContext, id: string) =>
  await selectIn(w.tx, 'inbox_threads', w.scope).selectAll().where(sql.ref('id'), '=', id).executeTakeFirstOrThrow() as unknown as Row;

/**
 * Adds `messages` to the thread's count and makes `at` its latest time when it is later; answers
 * the thread as it is now. `announce` records `thread.updated` (not for a thread the write made),
 * naming what changed from the counts `known` when the caller read them, else read here.
 */
export async function countMessages(w: WriteContext, id: string, messages: number, at: number, announce: boolean, known?: { message_count: unknown; last_message_at: unknown }): Promise<Row> {
  const before = announce ? known ?? await threadRow(w, id) : undefined;
  const after = await updateIn(w.tx, 'inbox_threads', w.scope).set({
    message_count: sql`message_count + ${messages}`,
    last_message_at: sql`case when last_message_at is null or last_message_at < ${at} then ${at} else last_message_at end`,
    updated_at: w.now,
  } as never).where(sql.ref('id'), '=', id).returningAll().executeTakeFirstOrThrow() as unknown as Row;
  const record = await presentOne(inbox, w.tx, w.scope, after);
  storeJson(inbox, w, record);
  if (before) {
    const previous = { message_count: Number(before.message_count), last_message_at: before.last_message_at === null ? null : Number(before.last_message_at) };
    w.emit(inbox.events.updated, record, Object.fromEntries(Object.entries(previous).filter(([name, value]) => record[name] !== value)));
  }
  return after;
}
