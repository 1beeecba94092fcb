// The sandbox's mailbox: Ada's address on the sandbox's verified example.com, so test mode can send
// from a mailbox at once (every test-mode message goes to the local driver: nothing leaves the
// service). Mailboxes are configuration, kept by a reset: the seed adds it only when missing, and
// gives it back its owner, Ada, whom the reset made again under a new id.
import { createRecord, updateRecord } from '../../platform/resource/store.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { mailboxes } from '../mailboxes/mailboxes.resource.ts';

export const SANDBOX_MAILBOX = { email: 'ada@example.com', display_name: 'Ada Lovelace', daily_limit: 200, hourly_limit: 40, timezone: 'Europe/London' };

export async function seedSandboxMailbox(w: WriteContext): Promise<void> {
  const owner = await selectIn(w.tx, 'members', w.scope).select('id').where('email', '=', SANDBOX_MAILBOX.email).executeTakeFirst();
  const known = await selectIn(w.tx, 'mailboxes', w.scope).select(['id', 'owner_id']).where('email', '=', SANDBOX_MAILBOX.email).executeTakeFirst();
  if (!known) {
    await createRecord(mailboxes, w, { ...SANDBOX_MAILBOX, owner_id: owner?.id ?? null, signature: 'Ada Lovelace\nExample Inc.' });
    return;
  }
  const ownerGone = known.owner_id !== null && !(await selectIn(w.tx, 'members', w.scope).select('id').where('id', '=', known.owner_id).executeTakeFirst());
  if (ownerGone) await updateRecord(mailboxes, w, known.id, { owner_id: owner?.id ?? null });
}
