// The Twilio adapter of the SMS kind, on Twilio's documented REST API (no SDK: one call): a text is
// `POST …/Messages.json`, form-encoded `To`, `From`, `Body` and `StatusCallback` (twilio-account.ts);
// 201 answers the Message resource (`sid`, `status`), a refusal `{code, message, more_info, status}`.
// What became of the text comes later to its status callback (sms-callbacks.routes.ts), signed with
// the Auth Token (`X-Twilio-Signature`). Calls go through the outbound guard like webhooks.
//
// A refusal for good (a 4xx other than 401, 403 and 429) fails the text; no connection, 401/403
// (credentials being fixed), 429 and 5xx sent nothing and are tried again. An answer that never
// came whole leaves unknown whether Twilio took the text: Twilio's API takes no idempotency key, so
// it is failed rather than risk a second text to a person.
import { Type } from 'typebox';
import type { OpenConnection } from '../connections.ts';
import type { ProviderAdapter } from '../registry.ts';
import { PermanentSendError } from '../refusals.ts';
import type { Scope } from '../../scope.ts';
import { callbackPath } from '../../public/callback-tokens.ts';
import { publicUrlOf } from '../../public/public-url.ts';
import { AccountSid, ApiUrl, refusalOf, transient, twilioAccount, TwilioCredentials, twilioSecret } from '../twilio-account.ts';
import type { SmsAnswer, SmsDriver, SmsMessage } from './sms.ts';

export { TWILIO_API } from '../twilio-account.ts';

export const TwilioSettings = Type.Object({
  account_sid: AccountSid,
  from: Type.String({ pattern: '^\\+[1-9]\\d{6,14}$', description: 'The Twilio number texts go from, in E.164 form', examples: ['+14155550100'] }),
  api_url: ApiUrl,
}, { additionalProperties: false });

/** The path of a text's status callback: its tenant, connection and reference, signed. */
export const statusCallbackPath = (secret: string, scope: Scope, connectionId: string, reference: string) =>
  callbackPath(secret, '/public/sms/twilio', [scope.orgId, scope.mode, connectionId, reference]);

export function openTwilio(connection: OpenConnection, scope: Scope): SmsDriver {
  const account = twilioAccount(connection);
  const sender = (connection.settings as { from: string }).from;
  return {
    sender,
    async send(message: SmsMessage): Promise<SmsAnswer> {
      const callback = publicUrlOf(statusCallbackPath(twilioSecret(), scope, connection.id, message.reference));
      const answer = await account.call('/Messages.json', new URLSearchParams({ To: message.to, From: message.from, Body: message.body, StatusCallback: callback }));
      if (answer.status === 200 || answer.status === 201) {
        const taken = JSON.parse(answer.body) as { sid?: string; status?: string };
        return { id: taken.sid ?? '', response: `${answer.status} ${taken.status ?? 'accepted'} ${taken.sid ?? ''}`.trim() };
      }
      const refusal = refusalOf(answer.status, answer.body);
      if (transient(answer.status)) throw new Error(`Twilio answered ${refusal.text}`);
      throw new PermanentSendError(`The text to ${message.to} was refused: ${refusal.text}`, refusal.text);
    },
  };
}

export const twilioSms: ProviderAdapter<SmsDriver> = { settings: TwilioSettings, credentials: TwilioCredentials, open: openTwilio };
