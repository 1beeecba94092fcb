// The Twilio adapter of the SMS kind, on Twilio's documented REST API (no SDK: one call): a text is
// `POST {api}/2010-04-01/Accounts/{AccountSid}/Messages.json`, form-encoded `To`, `From`, `Body` and
// `StatusCallback`, with HTTP Basic authentication by the Account SID and Auth Token; 201 answers
// the Message resource (`sid`, `status`), a refusal `{code, message, more_info, status}`. What
// became of the text comes later to its status callback (sms-callbacks.routes.ts), signed with the
// Auth Token (`X-Twilio-Signature`). Calls go through the outbound guard like webhooks.
//
// A refusal for good (a 4xx other than 401, 403 and 429) fails the text; no connection, 401/403
// (credentials being fixed), 429 and 5xx sent nothing and are tried again. An answer that never
// came whole leaves unknown whether Twilio took the text: Twilio's API takes no idempotency key, so
// it is failed rather than risk a second text to a person.
import { Type } from 'typebox';
import { OutboundError, type OutboundClient } from '../../outbound.ts';
import type { OpenConnection } from '../connections.ts';
import type { ProviderAdapter } from '../registry.ts';
import { PermanentSendError } from '../refusals.ts';
import type { Scope } from '../../scope.ts';
import { callbackPath } from '../../public/callback-tokens.ts';
import { publicUrlOf } from '../../public/public-url.ts';
import type { SmsAnswer, SmsDriver, SmsMessage } from './sms.ts';

export const TWILIO_API = 'https://api.twilio.com';
const TIMEOUT_MS = 15_000;

export const TwilioSettings = Type.Object({
  account_sid: Type.String({ pattern: '^AC[0-9a-fA-F]{32}$', description: 'The Account SID (`AC` and 32 hex digits)', examples: ['AC0123456789abcdef0123456789abcdef'] }),
  from: Type.String({ pattern: '^\\+[1-9]\\d{6,14}$', description: 'The Twilio number texts go from, in E.164 form', examples: ['+14155550100'] }),
  api_url: Type.Optional(Type.String({ format: 'uri', maxLength: 200, description: `Where Twilio's REST API answers; ${TWILIO_API} when omitted`, examples: [TWILIO_API] })),
}, { additionalProperties: false });

export const TwilioCredentials = Type.Object({
  auth_token: Type.String({ minLength: 16, maxLength: 200, description: 'The Auth Token: authenticates the calls and signs Twilio\'s callbacks', examples: ['0123456789abcdef0123456789abcdef'] }),
}, { additionalProperties: false });

interface Settings { account_sid: string; from: string; api_url?: string }

// What texts are sent with: the operator's outbound client and the service's secret, which signs
// each text's status callback URL (installed by the app's builders, as the SMTP adapter's policy).
let installed: { outbound: OutboundClient; secret: string } | undefined;

export function useTwilio(outbound: OutboundClient, secret: string): void {
  installed = { outbound, secret };
}

/** The path of a text's status callback: its tenant, connection and reference, signed. */
export const statusCallbackPath = (secret: string, scope: Scope, connectionId: string, reference: string) =>
  callbackPath(secret, '/public/sms/twilio', [scope.orgId, scope.mode, connectionId, reference]);

/** A message's text from a Twilio refusal, without the service's own details. */
function refusalOf(status: number, body: string): { code: string; text: string } {
  try {
    const answer = JSON.parse(body) as { code?: number; message?: string };
    return { code: String(answer.code ?? status), text: `${answer.code ?? status} ${answer.message ?? 'refused'}` };
  } catch {
    return { code: String(status), text: `${status} ${body.slice(0, 200)}` };
  }
}

const transient = (status: number) => status === 401 || status === 403 || status === 429 || status >= 500;

export function openTwilio(connection: OpenConnection, scope: Scope): SmsDriver {
  const settings = connection.settings as unknown as Settings;
  const { auth_token: token } = connection.credentials as { auth_token: string };
  const base = (settings.api_url ?? TWILIO_API).replace(/\/+$/, '');
  const url = `${base}/2010-04-01/Accounts/${encodeURIComponent(settings.account_sid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${settings.account_sid}:${token}`).toString('base64')}`;
  return {
    sender: settings.from,
    async send(message: SmsMessage): Promise<SmsAnswer> {
      if (!installed) throw new Error('The Twilio adapter has no outbound client');
      const callback = publicUrlOf(statusCallbackPath(installed.secret, scope, connection.id, message.reference));
      const form = new URLSearchParams({ To: message.to, From: message.from, Body: message.body, StatusCallback: callback });
      let answer;
      try {
        answer = await installed.outbound.post(url, form.toString(), {
          'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization, 'user-agent': 'RevenueDataService-Sms/1',
        }, { timeoutMs: TIMEOUT_MS, maxBytes: 64 * 1024 });
      } catch (error) {
        const reason = (error as Error).message;
        // Refused before connecting, or no connection made: nothing was sent.
        if (error instanceof OutboundError && reason.startsWith('Connection failed')) throw new Error(`Twilio could not be reached: ${reason}`, { cause: error });
        if (error instanceof OutboundError && !/No answer|cut off|did not arrive/.test(reason)) throw new PermanentSendError(`Twilio is not reachable from this service: ${reason}`, reason);
        throw new PermanentSendError(`Twilio's answer did not arrive (${reason}): whether it took the text is unknown, so it is not sent again`, reason);
      }
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
