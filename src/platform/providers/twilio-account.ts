// What Twilio's adapters share (texts: sms/twilio.ts, calls: telephony/twilio.ts): the account's
// settings and credentials, the outbound client and service secret the app's builders install, and
// one call of Twilio's REST API (`{api}/2010-04-01/Accounts/{AccountSid}/…`, form-encoded, HTTP
// Basic authentication by the Account SID and Auth Token) with its refusals read the same way.
import { Type } from 'typebox';
import { OutboundError, type OutboundClient, type OutboundResponse } from '../outbound.ts';
import type { OpenConnection } from './connections.ts';
import { PermanentSendError } from './refusals.ts';

export const TWILIO_API = 'https://api.twilio.com';
const TIMEOUT_MS = 15_000;

export const AccountSid = Type.String({ pattern: '^AC[0-9a-fA-F]{32}$', description: 'The Account SID (`AC` and 32 hex digits)', examples: ['AC0123456789abcdef0123456789abcdef'] });
export const ApiUrl = Type.Optional(Type.String({ format: 'uri', maxLength: 200, description: `Where Twilio's REST API answers; ${TWILIO_API} when omitted`, examples: [TWILIO_API] }));

export const TwilioCredentials = Type.Object({
  auth_token: Type.String({ minLength: 16, maxLength: 200, description: 'The Auth Token: authenticates the calls and signs Twilio\'s callbacks', examples: ['0123456789abcdef0123456789abcdef'] }),
}, { additionalProperties: false });

// The operator's outbound client and the service's secret, which signs each callback URL given to
// Twilio (installed by the app's builders, as the SMTP adapter's policy).
let installed: { outbound: OutboundClient; secret: string } | undefined;

export function useTwilio(outbound: OutboundClient, secret: string): void {
  installed = { outbound, secret };
}

/** The service's secret, which signs the callback URLs given to Twilio. */
export function twilioSecret(): string {
  if (!installed) throw new Error('The Twilio adapters have no outbound client');
  return installed.secret;
}

/** A refusal's text from Twilio's answer (`{code, message}`), without the service's own details. */
export function refusalOf(status: number, body: string): { code: string; text: string } {
  try {
    const answer = JSON.parse(body) as { code?: number; message?: string };
    return { code: String(answer.code ?? status), text: `${answer.code ?? status} ${answer.message ?? 'refused'}` };
  } catch {
    return { code: String(status), text: `${status} ${body.slice(0, 200)}` };
  }
}

/** Answers Twilio gives that say nothing was done and a later try may work. */
export const transient = (status: number) => status === 401 || status === 403 || status === 429 || status >= 500;

/** One account's REST API: `call(path, form)` POSTs, `call(path)` GETs, under the outbound guard. */
export function twilioAccount(connection: OpenConnection) {
  const settings = connection.settings as { account_sid: string; api_url?: string };
  const { auth_token: token } = connection.credentials as { auth_token: string };
  const base = `${(settings.api_url ?? TWILIO_API).replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(settings.account_sid)}`;
  const headers = { accept: 'application/json', authorization: `Basic ${Buffer.from(`${settings.account_sid}:${token}`).toString('base64')}`, 'user-agent': 'RevenueDataService-Twilio/1' };
  return {
    /**
     * Throws PermanentSendError when what was asked may have been done but the answer was lost
     * (Twilio takes no idempotency key: it is not asked again) or can never be reached; any other
     * error did nothing.
     */
    async call(path: string, form?: URLSearchParams): Promise<OutboundResponse> {
      if (!installed) throw new Error('The Twilio adapters have no outbound client');
      const options = { timeoutMs: TIMEOUT_MS, maxBytes: 64 * 1024 };
      try {
        return form
          ? await installed.outbound.post(`${base}${path}`, form.toString(), { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, options)
          : await installed.outbound.read(`${base}${path}`, headers, options);
      } catch (error) {
        const reason = (error as Error).message;
        // Refused before connecting, or no connection made: nothing was done.
        if (error instanceof OutboundError && reason.startsWith('Connection failed')) throw new Error(`Twilio could not be reached: ${reason}`, { cause: error });
        if (error instanceof OutboundError && !/No answer|cut off|did not arrive/.test(reason)) throw new PermanentSendError(`Twilio is not reachable from this service: ${reason}`, reason);
        throw new PermanentSendError(`Twilio's answer did not arrive (${reason}): whether it was done is unknown, so it is not asked again`, reason);
      }
    },
  };
}
