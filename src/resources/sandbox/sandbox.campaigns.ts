// The sandbox's draft campaigns send from the sandbox's mailbox (Ada's, on the verified
// example.com), attached once both exist as a person would attach it, with `campaign.updated`: so
// the draft passes its launch preflight and launches from test mode as it is.
import { parseJson } from '../../db/sql.ts';
import { updateRecord } from '../../platform/resource/store.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { campaigns } from '../campaigns/campaigns.resource.ts';
import type { Step } from '../campaigns/campaigns.schemas.ts';
import { SANDBOX_MAILBOX } from './sandbox.mailboxes.ts';

export async function attachSandboxMailbox(w: WriteContext): Promise<void> {
  const box = await selectIn(w.tx, 'mailboxes', w.scope).select('id').where('email', '=', SANDBOX_MAILBOX.email).executeTakeFirst();
  if (!box) return;
  const drafts = await selectIn(w.tx, 'campaigns', w.scope).select(['id', 'steps']).where('status', '=', 'draft').execute();
  for (const draft of drafts) {
    if (parseJson<Step[]>(draft.steps).some((s) => s.channel === 'email')) await updateRecord(campaigns, w, draft.id, { mailbox_ids: [box.id] });
  }
}
