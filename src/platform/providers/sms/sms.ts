// The SMS kind: what a driver is given (one text, addressed in E.164, its reference fixed by the
// outbox before the call) and what it answers. Drivers: `local` (local.ts), which sends nothing and
// decides the outcome from the number, and the Twilio adapter (twilio.ts) for a connection of
// provider `twilio`; a live text with neither a connection nor SMS_PROVIDER is 503
// `provider_not_configured`.
import type { Config } from '../../../config.ts';
import { defineProviderKind } from '../registry.ts';
import { localSms } from './local.ts';
import { twilioSms } from './twilio.ts';

export { PermanentSendError } from '../refusals.ts';

export interface SmsMessage {
  /** The outbox's id of the text, made from what is sent: the same send always has the same one. */
  reference: string;
  /** The sender: a number in E.164 form (or a sender name, where the gateway allows one). */
  from: string;
  /** The recipient, in E.164 form (`+442079460000`). */
  to: string;
  body: string;
}

export interface SmsAnswer {
  /** The provider's id of the message. */
  id: string;
  /** What the provider said, or the local driver's note. */
  response: string;
  /** What became of it at once, when the driver knows (the local driver does). */
  outcome?: 'delivered';
}

export interface SmsDriver {
  /** The number texts go from when the message names none: the connection's, or the local driver's. */
  readonly sender: string;
  /** Throws PermanentSendError for a refusal for good; any other error sent nothing and is retried. */
  send(message: SmsMessage): Promise<SmsAnswer>;
}

export const smsKind = defineProviderKind<SmsDriver>({
  kind: 'sms',
  noun: 'SMS',
  setting: 'SMS_PROVIDER',
  adapters: { twilio: twilioSms },
  local: localSms,
  fromConfig: (config: Config) => (config.smsProvider ? { id: 'SMS_PROVIDER', kind: 'sms', provider: config.smsProvider, settings: {}, credentials: {} } : undefined),
});
