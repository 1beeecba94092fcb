// Delivery status notifications (RFC 3464): a `multipart/report; report-type=delivery-status` whose
// `message/delivery-status` part names each recipient's outcome (`Action`, `Status`), and whose
// `text/rfc822-headers` or `message/rfc822` part carries the original message's header, so its
// Message-ID finds the message the service sent. `Action: failed` with a `5.x.x` status is a hard
// bounce (the address does not take mail); a `4.x.x` one is soft (it may later).
import type { Attachment, HeaderValue } from 'mailparser';

export interface RecipientOutcome {
  address: string | null;
  action: string | null;
  status: string | null;
  diagnostic: string | null;
}

export interface DeliveryReport {
  /** The Message-ID of the message the report is about, with angle brackets; null when the report does not carry it. */
  originalMessageId: string | null;
  recipients: RecipientOutcome[];
  /** `hard` (failed, 5.x.x), `soft` (failed, 4.x.x or no status), or null when nothing failed (a delay, a relay). */
  bounce: 'hard' | 'soft' | null;
  /** The first failed recipient's outcome, in words. */
  reason: string | null;
}

/** Header fields of one block (`Name: value`, folded lines joined), names lower-case. */
function fieldsOf(block: string): Map<string, string> {
  const fields = new Map<string, string>();
  let last: string | undefined;
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && last) {
      fields.set(last, `${fields.get(last)} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    last = line.slice(0, colon).trim().toLowerCase();
    if (!fields.has(last)) fields.set(last, line.slice(colon + 1).trim());
  }
  return fields;
}

/** The address of a `Final-Recipient: rfc822; ada@example.com` (or of `Original-Recipient`). */
const addressOf = (value: string | undefined): string | null => {
  const address = value?.split(';').pop()?.trim().replace(/^<|>$/g, '').toLowerCase();
  return address && address.includes('@') ? address : null;
};

const isReport = (contentType: HeaderValue | undefined): boolean => {
  if (!contentType || typeof contentType !== 'object' || !('value' in contentType)) return false;
  const params = (contentType as { params?: Record<string, string> }).params ?? {};
  return String(contentType.value).toLowerCase() === 'multipart/report' && /delivery-status/i.test(params['report-type'] ?? '');
};

/** The report of a message (its parsed `Content-Type` and attachments), or null when it is no delivery status notification. */
export function deliveryReportOf(contentType: HeaderValue | undefined, attachments: readonly Attachment[]): DeliveryReport | null {
  if (!isReport(contentType)) return null;
  const status = attachments.find((a) => /^message\/(global-)?delivery-status$/i.test(a.contentType));
  if (!status) return null;
  const blocks = status.content.toString('utf8').slice(0, 256 * 1024).split(/\r?\n[ \t]*\r?\n/).filter((b) => b.trim().length > 0);
  const recipients = blocks.slice(1).map(fieldsOf).filter((f) => f.has('final-recipient') || f.has('action')).slice(0, 100).map((f) => ({
    address: addressOf(f.get('final-recipient') ?? f.get('original-recipient')),
    action: f.get('action')?.toLowerCase() ?? null,
    status: f.get('status')?.match(/^\d\.\d{1,3}\.\d{1,3}/)?.[0] ?? null,
    diagnostic: f.get('diagnostic-code')?.slice(0, 1000) ?? null,
  }));
  const original = attachments.find((a) => /^(text\/rfc822-headers|message\/(global-)?rfc822(-headers)?)$/i.test(a.contentType));
  const originalHeader = original ? original.content.toString('utf8').slice(0, 256 * 1024).split(/\r?\n\r?\n/)[0] : '';
  const originalMessageId = fieldsOf(originalHeader).get('message-id')?.match(/<[^<>\s]+>/)?.[0] ?? null;
  const failed = recipients.filter((r) => r.action === 'failed');
  const bounce = failed.length === 0 ? null : failed.some((r) => r.status?.startsWith('5.')) ? 'hard' : 'soft';
  const first = failed[0];
  const reason = first ? [first.status, first.diagnostic].filter(Boolean).join(' ') || 'failed' : null;
  return { originalMessageId, recipients, bounce, reason };
}
