// The Twilio adapter of the telephony kind, on Twilio's documented Voice REST API (no SDK):
// - a call is `POST …/Calls.json`, form-encoded `To`, `From`, `Twiml` (what the answered call does:
//   dial the agent), `StatusCallback` with every `StatusCallbackEvent` (initiated, ringing, answered,
//   completed) and `MachineDetection=Enable` (the callbacks then say `AnsweredBy`); 201 answers the
//   Call resource (`sid`, `status: queued`);
// - hanging up is `POST …/Calls/{sid}.json` with `Status=canceled` (ringing) or `completed`;
// - what became of a call is `GET …/Calls/{sid}.json` (`status`, `answered_by`, `duration`).
// Status callbacks (voice-callbacks.routes.ts) are signed with the Auth Token (`X-Twilio-Signature`).
// Refusals and lost answers are read as for texts (twilio-account.ts): a lost answer to a new call
// fails it rather than risk calling a person twice.
import { Type } from 'typebox';
import { callbackPath } from '../../public/callback-tokens.ts';
import { publicUrlOf } from '../../public/public-url.ts';
import type { Scope } from '../../scope.ts';
import type { OpenConnection } from '../connections.ts';
import type { ProviderAdapter } from '../registry.ts';
import { PermanentSendError } from '../refusals.ts';
import { AccountSid, ApiUrl, refusalOf, transient, twilioAccount, TwilioCredentials, twilioSecret } from '../twilio-account.ts';
import { CALL_STATUSES, type CallRequest, type CallStatus, type CallUpdate, type PlacedCall, type TelephonyDriver } from './telephony.ts';

export const TwilioVoiceSettings = Type.Object({ account_sid: AccountSid, api_url: ApiUrl }, { additionalProperties: false });

/** The path of a call's status callback: its tenant, connection and call, signed. */
export const callStatusPath = (secret: string, scope: Scope, connectionId: string, callId: string) =>
  callbackPath(secret, '/public/voice/twilio', [scope.orgId, scope.mode, connectionId, callId]);

const escapeXml = (text: string) => text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The TwiML of an answered call: it is connected to the agent's phone, else to their browser client. */
const connectTo = (call: CallRequest) =>
  `<Response><Dial callerId="${escapeXml(call.from)}">${call.agent.phone ? `<Number>${escapeXml(call.agent.phone)}</Number>` : `<Client>${escapeXml(call.agent.client)}</Client>`}</Dial></Response>`;

/** Twilio's `AnsweredBy`: `human`, or `machine_start`, `machine_end_beep`, `fax`… (a machine); `unknown` says nothing. */
export const answeredByOf = (value: string | undefined): CallUpdate['answeredBy'] =>
  value === 'human' ? 'human' : value && value !== 'unknown' ? 'machine' : undefined;

/** Twilio's call status in the service's terms: `initiated` is still `queued`. */
export function callStatusOf(value: string | undefined): CallStatus | undefined {
  if (value === 'initiated') return 'queued';
  return (CALL_STATUSES as readonly string[]).includes(value ?? '') ? value as CallStatus : undefined;
}

export function openTwilioVoice(connection: OpenConnection, scope: Scope): TelephonyDriver {
  const account = twilioAccount(connection);
  const refused = (answer: { status: number; body: string }, what: string) => {
    const refusal = refusalOf(answer.status, answer.body);
    if (transient(answer.status)) return new Error(`Twilio answered ${refusal.text}`);
    return new PermanentSendError(`${what} was refused: ${refusal.text}`, refusal.text);
  };
  return {
    async place(call: CallRequest): Promise<PlacedCall> {
      const form = new URLSearchParams({
        To: call.to, From: call.from, Twiml: connectTo(call), MachineDetection: 'Enable',
        StatusCallback: publicUrlOf(callStatusPath(twilioSecret(), scope, connection.id, call.reference)), StatusCallbackMethod: 'POST',
      });
      for (const event of ['initiated', 'ringing', 'answered', 'completed']) form.append('StatusCallbackEvent', event);
      const answer = await account.call('/Calls.json', form);
      if (answer.status !== 200 && answer.status !== 201) throw refused(answer, `The call to ${call.to}`);
      const sid = (JSON.parse(answer.body) as { sid?: string }).sid;
      if (!sid) throw new PermanentSendError('Twilio took the call without naming it', answer.body.slice(0, 200));
      return { id: sid };
    },
    async hangUp(providerId: string, status: 'canceled' | 'completed'): Promise<void> {
      const answer = await account.call(`/Calls/${encodeURIComponent(providerId)}.json`, new URLSearchParams({ Status: status }));
      // A call that already ended cannot be ended again (21220): nothing is left to do.
      if (answer.status === 200 || refusalOf(answer.status, answer.body).code === '21220') return;
      throw refused(answer, `Hanging up ${providerId}`);
    },
    async fetch(providerId: string): Promise<CallUpdate | undefined> {
      const answer = await account.call(`/Calls/${encodeURIComponent(providerId)}.json`);
      if (answer.status === 404) return undefined;
      if (answer.status !== 200) throw refused(answer, `Reading ${providerId}`);
      const found = JSON.parse(answer.body) as { status?: string; answered_by?: string; duration?: string | null };
      const status = callStatusOf(found.status);
      if (!status) return undefined;
      const duration = Number(found.duration);
      return { status, answeredBy: answeredByOf(found.answered_by), ...(found.duration != null && Number.isFinite(duration) ? { duration } : {}) };
    },
  };
}

export const twilioTelephony: ProviderAdapter<TelephonyDriver> = { settings: TwilioVoiceSettings, credentials: TwilioCredentials, open: openTwilioVoice };
