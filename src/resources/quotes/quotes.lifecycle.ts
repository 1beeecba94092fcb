// The lifecycle of a quote, declared for the kernel (lifecycle.ts): the seller sends, voids and
// returns a quote to draft (routes); the recipient views, accepts or declines it through its public
// link (public.routes.ts, through transitions.ts); the clock expires it (quotes.jobs.ts). Each move is
// decided on the state as of now: a quote past `valid_until` reads as expired before it is recorded.
import { randomBytes } from 'node:crypto';
import { badRequest } from '../../platform/errors.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { ActionOutcome, LifecycleDefinition } from '../../platform/resource/lifecycle.ts';
import { getRow } from '../../platform/resource/store.ts';
import { deleteIn, tenantOf } from '../../platform/resource/tenancy.ts';
import { hashSecret } from '../../platform/tokens.ts';
import type { WriteContext } from '../../platform/write.ts';
import { contacts } from '../contacts/contacts.resource.ts';
import { cancelExpiry, scheduleExpiry } from './expiry.ts';
import { QUOTE_STATES } from './quotes.schemas.ts';
import { AWAITING, stateAt, storedLines } from './quotes.store.ts';

/** 256 random bits, URL-safe: the public link cannot be guessed. */
const newToken = () => randomBytes(32).toString('base64url');

/** A draft needs lines, a contact that exists and a date still ahead; the link is minted with the move, its token answered once. */
async function send(w: WriteContext, row: Row): Promise<ActionOutcome> {
  if (storedLines(row).length === 0) throw badRequest('A quote needs at least one line item to be sent');
  if (!row.contact_id) throw badRequest('A quote needs a contact_id to be sent');
  await getRow(contacts, w.tx, w.dialect, w.scope, String(row.contact_id));
  if (row.valid_until !== null && Number(row.valid_until) <= w.now) throw badRequest('valid_until has passed: set a later one before sending');
  const token = newToken();
  await w.tx.insertInto('quote_links').values({ token_hash: hashSecret(token), ...tenantOf(w.scope), quote_id: row.id, created_at: w.now }).execute();
  scheduleExpiry(w, row.id, row.valid_until);
  // The event, like the store, never holds the token.
  return { answer: { public_token: token } };
}

/** Back to draft, one revision up; the public link of the revision before stops working. */
async function editAsDraft(w: WriteContext, row: Row): Promise<ActionOutcome> {
  await deleteIn(w.tx, 'quote_links', w.scope).where('quote_id', '=', row.id).execute();
  cancelExpiry(w, row.id);
  return { set: { revision: Number(row.revision) + 1, sent_at: null, viewed_at: null, declined_at: null, decline_reason: null } };
}

/** The recipient's acceptance, in the name given (checked non-blank by its route) from the client address. */
async function accept(w: WriteContext, row: Row, input: Record<string, unknown>): Promise<ActionOutcome> {
  cancelExpiry(w, row.id);
  return { set: { signer_name: String(input.name).trim(), signer_ip: input.ip, viewed_at: row.viewed_at ?? w.now } };
}

async function decline(w: WriteContext, row: Row, input: Record<string, unknown>): Promise<ActionOutcome> {
  cancelExpiry(w, row.id);
  return { set: { decline_reason: (input.reason as string | null | undefined)?.trim() || null, viewed_at: row.viewed_at ?? w.now } };
}

const ANSWERED = 'Taken by the recipient through the public link (`POST /v1/public/quotes/{token}/…`).';

export const QUOTE_LIFECYCLE: LifecycleDefinition = {
  states: QUOTE_STATES, initial: 'draft',
  description: '`draft` → `sent` → `viewed` → `accepted` or `declined`; `expired` once `valid_until` passes unanswered; `void` when the seller withdraws it. Read-only: moved by the quote\'s operations',
  stateOf: (row, now) => stateAt(String(row.status), row.valid_until, now),
  actions: {
    send: {
      from: ['draft'], to: 'sent', event: 'sent', stamps: ['sent_at'], guard: send, errors: [404],
      summary: 'Send a quote', eventDescription: 'A quote was sent: it has a public link and can no longer be edited (the link\'s token is never part of the event: the send answers it once)',
      description: 'Sends a draft and mints its public link (`public_token`; the page is `/q/{public_token}`). The token is in this answer only: only its hash is stored, and reads, listings and events show `public_token: null`. Needs at least one line item and a `contact_id` (400), a `valid_until` still ahead when set (400); a contact deleted since is 404 `Contact not found`.',
    },
    void: {
      from: ['draft', ...AWAITING], to: 'void', event: 'voided', stamps: ['voided_at'], guard: async (w, row) => cancelExpiry(w, row.id),
      summary: 'Void a quote', eventDescription: 'The seller voided a quote; its link shows it as void and can no longer be answered',
      description: 'Withdraws a draft, sent or viewed quote: its link shows it as void, no longer answerable.',
    },
    'edit-as-draft': {
      from: ['sent', 'viewed', 'declined', 'expired'], to: 'draft', event: 'returned_to_draft', participle: 'edited as a draft (duplicate it instead)', guard: editAsDraft,
      summary: 'Edit a sent quote as a draft', eventDescription: 'A quote became a draft again (edit-as-draft): `revision` went up by one and the previous public link stopped working',
      description: 'Brings a quote back to `draft` with `revision` one higher, so it can be edited and sent again (with a new link). The old public link answers 404 from now on. An accepted or void quote can be duplicated instead.',
    },
    view: {
      from: ['sent'], to: 'viewed', event: 'viewed', stamps: ['viewed_at'], route: false,
      summary: 'View a quote', eventDescription: 'The recipient opened a sent quote for the first time', description: `The first view of a sent quote. ${ANSWERED}`,
    },
    accept: {
      from: AWAITING, to: 'accepted', event: 'accepted', stamps: ['accepted_at'], guard: accept, route: false,
      summary: 'Accept a quote', description: ANSWERED,
      eventDescription: 'The recipient accepted a quote; the object carries `signer_name`, `signer_ip` and `accepted_at`. Nothing else changes: the seller decides what happens to the deal',
    },
    decline: {
      from: AWAITING, to: 'declined', event: 'declined', stamps: ['declined_at'], guard: decline, route: false,
      summary: 'Decline a quote', description: ANSWERED, eventDescription: 'The recipient declined a quote; the object carries `decline_reason`',
    },
    expire: {
      from: AWAITING, to: 'expired', event: 'expired', route: false,
      summary: 'Expire a quote', description: 'Recorded by the scheduled expiry once `valid_until` has passed unanswered.',
      eventDescription: 'A sent or viewed quote passed its `valid_until` without an answer (recorded by the scheduled expiry)',
    },
  },
};
