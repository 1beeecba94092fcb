// The mailboxes a sender (a campaign, a sequence) sends its e-mail steps from, as a write gives them and a read answers them.
import { Type } from 'typebox';
import { Str } from '../../platform/schemas.ts';

const MAILBOX_IDS_EXAMPLE = ['mbx_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'];
export const MailboxIdsInput = Type.Array(Str({ description: 'The id of a mailbox of the organization', maxLength: 64, examples: [MAILBOX_IDS_EXAMPLE[0]] }), {
  uniqueItems: true, maxItems: 100, description: 'The mailboxes the e-mail steps are sent from, each one of the organization (else 404 `Mailbox not found`); the launch preflight weighs their limits against the audience and checks their sending domains', examples: [MAILBOX_IDS_EXAMPLE],
});
export const MailboxIdsOutput = Type.Array(Type.String(), { description: 'The mailboxes the e-mail steps are sent from', examples: [MAILBOX_IDS_EXAMPLE] });
