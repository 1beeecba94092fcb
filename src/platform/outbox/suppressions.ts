// The suppression rule of every channel, in one place: an address that unsubscribed, hard-bounced,
// complained or was suppressed by hand (a row of `suppressions`), or an e-mail address or its domain
// that is an entry of one of the tenant's suppression lists, is never sent to again in that
// organization and mode, whatever list, campaign or sequence it is in. Sends ask `suppressionOf`
// before each message; bounces, complaints and unsubscribe links record with `suppress`; each message
// carries its recipient's own `unsubscribeLink` (RFC 8058 one-click through `listUnsubscribeHeaders`).
// The API of the records (`/v1/suppressions`) and the link's public routes live in
// resources/suppressions/.
import type { Kysely, Selectable } from 'kysely';
import { dialectOf } from '../../db/database.ts';
import { statement } from '../../db/prepared.ts';
import type { DB } from '../../db/schema.ts';
import { resourceEvent } from '../event-types.ts';
import { creationTime, newId } from '../ids.ts';
import { newLinkToken } from '../public/link-tokens.ts';
import { publicUrlOf } from '../public/public-url.ts';
import { previous } from '../resource/changes.ts';
import { selectIn, tenantOf, updateIn } from '../resource/tenancy.ts';
import type { Scope } from '../scope.ts';
import type { WriteContext } from '../write.ts';

export const CHANNELS = ['email', 'sms', 'phone'] as const;
export type Channel = (typeof CHANNELS)[number];
export const SUPPRESSION_REASONS = ['unsubscribed', 'hard_bounce', 'complaint', 'manual'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

/**
 * Reasons the recipient gave (an unsubscribe, a spam complaint): a suppression for one of them is
 * never deleted through the API, and one recorded over a manual or hard-bounce suppression of the
 * same address takes its place, so that deleting the weaker one later cannot undo it.
 */
export const RECIPIENT_REASONS: ReadonlySet<string> = new Set<SuppressionReason>(['unsubscribed', 'complaint']);

/** The `reason` answered when an address is suppressed by a suppression list's entry (the `source` is the list). */
export const LISTED = 'suppression_list';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const E164 = /^\+[1-9]\d{1,14}$/;

/**
 * The stored form of an address: an e-mail address trimmed and lower-cased, a phone number (E.164,
 * as platform/phone.ts reads it where it is written) trimmed.
 */
export const normalizeAddress = (channel: Channel, address: string): string =>
  (channel === 'email' ? address.trim().toLowerCase() : address.trim());

/** Why `address` (normalized) is no address of `channel`, or undefined when it is one. */
export function addressProblem(channel: Channel, address: string): string | undefined {
  if (channel === 'email') return EMAIL.test(address) ? undefined : 'value is not an e-mail address';
  return E164.test(address) ? undefined : 'value is not a phone number in E.164 form (+ and up to 15 digits)';
}

/** The domain of an e-mail address: what follows its last '@' (as suppression lists compare it). */
const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1);

// One statement, each branch an index probe: the address's suppression (suppressions_address), then
// the list entries equal to the address or its domain (list_entries_value); a suppression of its own
// comes first, its reason being the more telling.
const CHECK = statement<{ reason: string; source: string }>(`select reason, source from (
  select reason, id as source, 0 as precedence from suppressions where org_id = ? and mode = ? and channel = ? and address = ?
  union all
  select '${LISTED}' as reason, list_id as source, 1 as precedence from list_entries where org_id = ? and mode = ? and ? = 'email' and value in (?, ?)
) found order by precedence limit 1`, { bounded: true });

/**
 * Whether the tenant may not send to `address` on `channel`: the reason (`unsubscribed`,
 * `hard_bounce`, `complaint`, `manual`, or `suppression_list`) and its source (the suppression's id,
 * or the list's), or undefined when it may.
 */
export async function suppressionOf(db: Kysely<DB>, scope: Scope, channel: Channel, address: string): Promise<{ reason: string; source: string } | undefined> {
  const normalized = normalizeAddress(channel, address);
  const { orgId, mode } = scope;
  const domain = channel === 'email' ? domainOf(normalized) : normalized;
  return CHECK.first(db, dialectOf(db), [orgId, mode, channel, normalized, orgId, mode, channel, normalized, domain]);
}

/** `suppressionOf` for many addresses of one channel in two reads (a scheduler's run): the suppressed ones (normalized), with why. */
export async function suppressionsOf(db: Kysely<DB>, scope: Scope, channel: Channel, addresses: readonly string[]): Promise<Map<string, { reason: string; source: string }>> {
  const found = new Map<string, { reason: string; source: string }>();
  const normalized = [...new Set(addresses.map((a) => normalizeAddress(channel, a)))];
  if (normalized.length === 0) return found;
  // A suppression of its own comes first, its reason being the more telling (as in CHECK).
  const own = await selectIn(db, 'suppressions', scope).select(['id', 'reason', 'address']).where('channel', '=', channel).where('address', 'in', normalized).execute();
  for (const r of own) if (!found.has(r.address)) found.set(r.address, { reason: r.reason, source: r.id });
  if (channel !== 'email') return found;
  const rest = normalized.filter((a) => !found.has(a));
  if (rest.length === 0) return found;
  const values = [...new Set([...rest, ...rest.map(domainOf)])];
  const listed = new Map((await selectIn(db, 'list_entries', scope).select(['value', 'list_id']).where('value', 'in', values).execute()).map((r) => [r.value, r.list_id]));
  for (const a of rest) {
    const list = listed.get(a) ?? listed.get(domainOf(a));
    if (list) found.set(a, { reason: LISTED, source: list });
  }
  return found;
}

export type SuppressionRow = Selectable<DB['suppressions']>;

/** The API form of a suppression (the record of `GET /v1/suppressions/{id}`, and of its events). */
export const suppressionRecord = (row: SuppressionRow) => ({
  id: row.id,
  channel: row.channel,
  address: row.address,
  reason: row.reason,
  contact_id: row.contact_id,
  message_id: row.message_id,
  detail: row.detail,
  created_at: Number(row.created_at),
  updated_at: Number(row.updated_at),
});

export interface SuppressionEntry {
  channel: Channel;
  address: string;
  reason: SuppressionReason;
  contact_id?: string | null;
  message_id?: string | null;
  detail?: string;
}

/** The tenant's suppression of an address (normalized) on a channel, in the write's transaction. */
export const heldSuppression = (w: WriteContext, channel: Channel, address: string) =>
  selectIn(w.tx, 'suppressions', w.scope).selectAll().where('channel', '=', channel).where('address', '=', address).executeTakeFirst();

/**
 * Suppresses an address on a channel, with `suppression.created` (and `contact.unsubscribed` for an
 * unsubscribe). Idempotent: an address already suppressed keeps its suppression, except that an
 * unsubscribe or a complaint takes the place of a manual or hard-bounce reason (`suppression.updated`).
 * Every write of a tenant holds its lock, so two writes cannot both find the address free.
 */
export async function suppress(w: WriteContext, entry: SuppressionEntry): Promise<void> {
  const address = normalizeAddress(entry.channel, entry.address);
  const held = await heldSuppression(w, entry.channel, address);
  let record: ReturnType<typeof suppressionRecord>;
  if (held) {
    if (!RECIPIENT_REASONS.has(entry.reason) || RECIPIENT_REASONS.has(held.reason)) return;
    const changes = {
      reason: entry.reason,
      contact_id: held.contact_id ?? entry.contact_id ?? null,
      message_id: entry.message_id ?? held.message_id,
      detail: entry.detail ?? held.detail,
      updated_at: w.now,
    };
    await updateIn(w.tx, 'suppressions', w.scope).set(changes).where('id', '=', held.id).execute();
    const before = suppressionRecord(held);
    record = suppressionRecord({ ...held, ...changes });
    w.emit(resourceEvent('suppression', 'updated'), record, previous(before, record));
  } else {
    const id = newId('sup');
    const at = creationTime(id, w.now);
    const row: SuppressionRow = {
      ...tenantOf(w.scope), id, channel: entry.channel, address, reason: entry.reason,
      contact_id: entry.contact_id ?? null, message_id: entry.message_id ?? null, detail: entry.detail ?? null, created_at: at, updated_at: at,
    };
    // Inserted now, not queued: a later check in the same write must find it.
    await w.tx.insertInto('suppressions').values(row).execute();
    w.count('suppressions', 1);
    record = suppressionRecord(row);
    w.emit(resourceEvent('suppression', 'created'), record);
  }
  if (entry.reason === 'unsubscribed') w.emit('contact.unsubscribed', record);
}

/** The public path of an unsubscribe link (its page, and where its one-click POST goes). */
export const unsubscribePath = (token: string) => `/public/unsubscribe/${token}`;

/**
 * Mints the unsubscribe link of one recipient of one message: a random token, stored only as its
 * hash (`unsubscribe_links`, written with the write), naming the tenant, the channel, the address and
 * the contact and message when known. The URL is absolute, on PUBLIC_URL.
 */
export function unsubscribeLink(w: WriteContext, target: { channel: Channel; address: string; contact_id?: string | null; message_id?: string | null }): { token: string; url: string } {
  const { token, hash } = newLinkToken();
  // Inserted with the write's end, the links of a scheduler's run in one statement.
  w.insertLater('unsubscribe_links', {
    token_hash: hash, ...tenantOf(w.scope), channel: target.channel, address: normalizeAddress(target.channel, target.address),
    contact_id: target.contact_id ?? null, message_id: target.message_id ?? null, created_at: w.now,
  });
  return { token, url: publicUrlOf(unsubscribePath(token)) };
}

/**
 * The headers of RFC 8058 one-click unsubscribe (RFC 2369 `List-Unsubscribe`): the link first, so a
 * client that takes the first method it supports takes it; a `mailto:` (an address or a mailto URI)
 * after it for clients without HTTP.
 */
export function listUnsubscribeHeaders(url: string, mailto?: string): { 'List-Unsubscribe': string; 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } {
  const mail = mailto ? `, <${mailto.startsWith('mailto:') ? mailto : `mailto:${mailto}`}>` : '';
  return { 'List-Unsubscribe': `<${url}>${mail}`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
}
