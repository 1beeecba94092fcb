// The hooks of threads (loaded by their definition, so it loads nothing of the definition): a
// deleted thread takes its messages and its wake-up with it. Writes of threads are thread-writes.ts.
import type { Row } from '../../platform/resource/define.ts';
import { deleteIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { wakeKey } from './inbox.lifecycle.ts';

export async function beforeDelete(w: WriteContext, row: Row): Promise<void> {
  await deleteIn(w.tx, 'inbox_messages', w.scope).where('thread_id', '=', row.id).execute();
  w.cancel(wakeKey(row.id));
}

/** Tags as stored: trimmed, each once, in the order given. */
export function normalizeTags(tags: readonly string[]): string[] {
  return [...new Set(tags.map((t) => t.trim()).filter((t) => t.length > 0))];
}
