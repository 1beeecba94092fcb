// The local SMS driver: sends nothing, and answers at once with an outcome the number decides, as
// the magic numbers of an SMS gateway's test credentials do: +15005550001 (not a valid number) and
// +15005550009 (cannot receive texts) are refused for good, as is a body past 1,600 characters
// (what gateways take); every other text is delivered. Its id is made from the outbox's reference,
// so the same send answers the same id.
import { createHash } from 'node:crypto';
import type { Scope } from '../../scope.ts';
import { PermanentSendError } from '../refusals.ts';
import type { SmsAnswer, SmsDriver, SmsMessage } from './sms.ts';

/** A number of the range kept for fiction (555-01xx): the sender of texts that name none. */
export const LOCAL_SENDER = '+12015550100';
/** The longest body gateways take (ten segments). */
export const SMS_MAX_LENGTH = 1600;

const REFUSED: Record<string, string> = {
  '+15005550001': '21211 The number is not a valid phone number (local driver)',
  '+15005550009': '21614 The number cannot receive text messages (local driver)',
};

export function localSms(_scope: Scope): SmsDriver {
  return {
    sender: LOCAL_SENDER,
    async send(message: SmsMessage): Promise<SmsAnswer> {
      const refused = REFUSED[message.to] ?? (message.body.length > SMS_MAX_LENGTH ? `21617 The body is longer than ${SMS_MAX_LENGTH} characters (local driver)` : undefined);
      if (refused) throw new PermanentSendError(`The text to ${message.to} was refused: ${refused}`, refused);
      const id = `SMlocal${createHash('sha256').update(message.reference).digest('hex').slice(0, 32)}`;
      return { id, response: 'Recorded by the local driver; nothing was sent', outcome: 'delivered' };
    },
  };
}
