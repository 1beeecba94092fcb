// What sending a message reads before its transaction, for all the messages of a claim at once (the
// send job's `load`): the outbox rows, their mailboxes, the driver of each connection of the
// message's kind (e-mail or SMS; credentials opened once) and the DKIM key of each sending domain.
// A few statements per tenant and claim instead of five per message; what must hold when the
// attempt is recorded (the message still queued and never attempted, its recipients not
// suppressed, its mailbox's room) is checked again in the attempt's own transaction (outbox.jobs.ts).
import type { Kysely } from 'kysely';
import type { Config } from '../../config.ts';
import type { DB, Mode } from '../../db/schema.ts';
import { AppError } from '../../platform/errors.ts';
import { emailKind, type EmailDriver } from '../../platform/providers/email/email.ts';
import { resolveProvider, type ProviderKind, type Resolved } from '../../platform/providers/registry.ts';
import { smsKind, type SmsDriver } from '../../platform/providers/sms/sms.ts';
import type { Row } from '../../platform/resource/define.ts';
import { rowsByIds } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { dkimKeyFor, type DkimKey } from '../domains/dkim.ts';

export interface SendContext {
  /** The message as read before the attempt; undefined when it no longer exists. */
  row: Row | undefined;
  /** Its mailbox, null when it names one that was deleted. */
  mailbox: Row | null | undefined;
  /** The driver an e-mail goes through, or why there is none (no provider configured). */
  provider: Resolved<EmailDriver> | AppError | undefined;
  /** The driver a text goes through, or why there is none; undefined for an e-mail. */
  sms?: Resolved<SmsDriver> | AppError;
  dkim: DkimKey | undefined;
}

const senderAddress = (row: Row) => {
  const from = row.from_address as string;
  return /<([^>]+)>$/.exec(from)?.[1] ?? from;
};

/** The send contexts of the messages `ids` of one tenant, in their order. */
export async function loadSendContexts(db: Kysely<DB>, scope: Scope, ids: readonly string[], secret: string, config: Config): Promise<SendContext[]> {
  const rows = new Map((await rowsByIds(db, 'outbox_messages', scope, ids) as Row[]).map((r) => [r.id, r]));
  const mailboxIds = [...new Set([...rows.values()].map((r) => r.mailbox_id as string | null).filter((id) => id !== null))];
  const mailboxes = new Map((await rowsByIds(db, 'mailboxes', scope, mailboxIds) as Row[]).map((m) => [m.id, m]));
  const providers = new Map<string, Promise<Resolved<unknown> | AppError>>();
  const keys = new Map<string, Promise<DkimKey | undefined>>();
  const providerOf = <D>(kind: ProviderKind<D>, connectionId: string | null) => {
    const key = `${kind.kind}:${connectionId ?? ''}`;
    let found = providers.get(key);
    if (!found) {
      found = resolveProvider(kind, { db, scope, secret, config }, connectionId).catch((error: unknown) => {
        if (error instanceof AppError) return error;
        throw error;
      });
      providers.set(key, found);
    }
    return found as Promise<Resolved<D> | AppError>;
  };
  const keyOf = (address: string) => {
    const domain = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
    let found = keys.get(domain);
    if (!found) keys.set(domain, found = dkimKeyFor(db, scope, secret, domain));
    return found;
  };
  return Promise.all(ids.map(async (id): Promise<SendContext> => {
    const row = rows.get(id);
    if (!row) return { row, mailbox: undefined, provider: undefined, dkim: undefined };
    if (row.channel === 'sms') return { row, mailbox: undefined, provider: undefined, sms: await providerOf(smsKind, row.connection_id as string | null), dkim: undefined };
    const mailboxId = row.mailbox_id as string | null;
    const mailbox = mailboxId === null ? undefined : mailboxes.get(mailboxId) ?? null;
    const provider = await providerOf(emailKind, (row.connection_id as string | null) ?? (mailbox?.connection_id as string | null | undefined) ?? null);
    const dkim = provider instanceof AppError || provider.provider === 'local' ? undefined : await keyOf(senderAddress(row));
    return { row, mailbox, provider, dkim };
  }));
}

/** The send contexts of a claim's jobs (of any tenants), in their order. */
export async function loadClaimedSends(db: Kysely<DB>, jobs: ReadonlyArray<{ id: string; orgId: string; mode: string }>, secret: string, config: Config): Promise<SendContext[]> {
  const tenants = Map.groupBy(jobs.map((job, i) => ({ ...job, i })), (job) => `${job.orgId}/${job.mode}`);
  const out: SendContext[] = new Array(jobs.length);
  await Promise.all([...tenants.values()].map(async (some) => {
    const scope: Scope = { orgId: some[0].orgId, mode: some[0].mode as Mode };
    const found = await loadSendContexts(db, scope, some.map((j) => j.id), secret, config);
    for (const [k, job] of some.entries()) out[job.i] = found[k];
  }));
  return out;
}
