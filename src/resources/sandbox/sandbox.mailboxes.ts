// The sandbox's mailbox: Ada's address on the sandbox's verified example.com, so test mode can send
// from a mailbox at once (every test-mode message goes to the local driver: nothing leaves the
// service). Mailboxes are configuration, kept by a reset: the seed adds it only when missing.
import { createRecord } from '../../platform/resource/store.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { mailboxes } from '../mailboxes/mailboxes.resource.ts';

export const SANDBOX_MAILBOX = { email: 'ada@example.com', display_name: 'Ada Lovelace', daily_limit: 200, hourly_limit: 40, timezone: 'Europe/London' };

export async function seedSandboxMailbox(w: WriteContext): Promise<void> {
  const known = await selectIn(w.tx, 'mailboxes', w.scope).select('id').where('email', '=', SANDBOX_MAILBOX.email).executeTakeFirst();
  if (known) return;
  const owner = await selectIn(w.tx, 'members', w.scope).select('id').where('email', '=', SANDBOX_MAILBOX.email).executeTakeFirst();
  await createRecord(mailboxes, w, { ...SANDBOX_MAILBOX, owner: owner?.id ?? null, signature: 'Ada Lovelace\nExample Inc.' });
}
