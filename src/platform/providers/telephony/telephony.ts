// The telephony kind: place a call, hang it up, ask what became of it. A driver is given one call,
// its reference (the service's call id) fixed before the provider is reached, and answers the
// provider's id; what happens next arrives as status updates (Twilio's call states), posted to the
// call's callback by the provider or, for the local driver, delivered by the service itself from
// the updates it answers with the call. Drivers: `local` (local.ts), which calls nobody and plays an
// outcome the number chooses, and the Twilio adapter (twilio.ts); a live call with neither a
// connection nor TELEPHONY_PROVIDER is 503 `provider_not_configured`.
import type { Config } from '../../../config.ts';
import { defineProviderKind } from '../registry.ts';
import { localTelephony } from './local.ts';
import { twilioTelephony } from './twilio.ts';

/** Twilio's call states, in the order a call moves through them; the last five are final. */
export const CALL_STATUSES = ['queued', 'ringing', 'in-progress', 'completed', 'busy', 'no-answer', 'failed', 'canceled'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
export const FINAL_STATUSES: ReadonlySet<CallStatus> = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);

export interface CallUpdate {
  status: CallStatus;
  /** Who answered, once known: a person or a machine (voicemail). */
  answeredBy?: 'human' | 'machine';
  /** Seconds talked, with the final state. */
  duration?: number;
  /** The provider's reason for a failure. */
  error?: string;
}

/** An update the local driver delivers itself, `afterMs` after the call was placed. */
export interface PlayedUpdate extends CallUpdate {
  afterMs: number;
}

export interface CallRequest {
  /** The service's id of the call: the same call always has the same one. */
  reference: string;
  /** The number called from and the one called, in E.164 form. */
  from: string;
  to: string;
  /** Where the call is connected once answered: the agent's phone, or their browser client's identity. */
  agent: { phone: string | null; client: string };
}

export interface PlacedCall {
  /** The provider's id of the call. */
  id: string;
  /** The local driver's outcome, delivered by the service as if the provider had posted it. */
  played?: PlayedUpdate[];
}

export interface TelephonyDriver {
  /** Throws PermanentSendError when the provider refused the call for good; any other error placed nothing. */
  place(call: CallRequest): Promise<PlacedCall>;
  /** Ends the call: `canceled` while it rings, `completed` once answered. */
  hangUp(providerId: string, status: 'canceled' | 'completed'): Promise<void>;
  /** What the provider says of the call now (reconciliation of a call whose callbacks stopped). */
  fetch(providerId: string): Promise<CallUpdate | undefined>;
}

export const telephonyKind = defineProviderKind<TelephonyDriver>({
  kind: 'telephony',
  noun: 'telephony',
  setting: 'TELEPHONY_PROVIDER',
  adapters: { twilio: twilioTelephony },
  local: localTelephony,
  fromConfig: (config: Config) => (config.telephonyProvider ? { id: 'TELEPHONY_PROVIDER', kind: 'telephony', provider: config.telephonyProvider, settings: {}, credentials: {} } : undefined),
});
