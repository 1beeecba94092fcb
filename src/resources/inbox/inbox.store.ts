// What threads do beyond the kernel's CRUD: a deleted thread takes its messages and its wake-up with
// it; assignment and tags are updates of fields the API does not write directly.
import type { ApiRecord, Row } from '../../platform/resource/define.ts';
import { applyUpdate, getRow, presentOne } from '../../platform/resource/store.ts';
import { deleteIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { inbox } from './inbox.resource.ts';
import { wakeKey } from './inbox.lifecycle.ts';

export async function beforeDelete(w: WriteContext, row: Row): Promise<void> {
  await deleteIn(w.tx, 'inbox_messages', w.scope).where('thread_id', '=', row.id).execute();
  w.cancel(wakeKey(row.id));
}

/** Tags as stored: trimmed, each once, in the order given. */
export function normalizeTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((t) => t.trim()).filter((t) => t.length > 0))];
}

/**
 * Sets fields the API does not write directly (the assignee, the tags) through the kernel's update:
 * `thread.updated` with their earlier values; values the thread already holds change nothing.
 */
export async function setFields(w: WriteContext, id: string, values: Record<string, unknown>): Promise<ApiRecord> {
  const before = await getRow(inbox, w.tx, w.dialect, w.scope, id);
  const old = await presentOne(inbox, w.tx, w.scope, before);
  const changed = Object.entries(values).some(([name, value]) => JSON.stringify(old[name]) !== JSON.stringify(value));
  return changed ? applyUpdate(inbox, w, before, old, values) : old;
}
