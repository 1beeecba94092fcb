// The local telephony driver: calls nobody, and plays the outcome the called number's last digit
// chooses, so a test (or a walk-through in test mode) decides what happens by the numbers it dials:
//
//   0–3  answered by a person after 1 s, who hangs up after 3 s (completed, 3 s talked)
//   4    busy after 1 s
//   5    rings 3 s, no answer
//   6    failed at once (the number does not exist)
//   7    answered by a machine after 1 s (voicemail), 2 s
//   8    answered by a person after 2 s, 5 s talked
//   9    rings, then nothing more is heard: reconciliation asks the driver, which says no-answer
//
// Its ids are made from the service's reference and the digit, so the same call answers the same id
// and `fetch` knows the outcome without keeping anything.
import { createHash } from 'node:crypto';
import type { Scope } from '../../scope.ts';
import type { CallRequest, CallUpdate, PlacedCall, PlayedUpdate, TelephonyDriver } from './telephony.ts';

const ANSWERED = (at: number, talk: number, by: 'human' | 'machine' = 'human'): PlayedUpdate[] => [
  { afterMs: 0, status: 'ringing' },
  { afterMs: at, status: 'in-progress', answeredBy: by },
  { afterMs: at + talk, status: 'completed', answeredBy: by, duration: talk / 1000 },
];

const OUTCOMES: Record<string, PlayedUpdate[]> = {
  0: ANSWERED(1000, 3000), 1: ANSWERED(1000, 3000), 2: ANSWERED(1000, 3000), 3: ANSWERED(1000, 3000),
  4: [{ afterMs: 0, status: 'ringing' }, { afterMs: 1000, status: 'busy' }],
  5: [{ afterMs: 0, status: 'ringing' }, { afterMs: 3000, status: 'no-answer' }],
  6: [{ afterMs: 0, status: 'failed', error: '21217 The number is not a valid phone number (local driver)' }],
  7: ANSWERED(1000, 2000, 'machine'),
  8: ANSWERED(2000, 5000),
  9: [{ afterMs: 0, status: 'ringing' }],
};

const digitOf = (number: string) => number.at(-1) ?? '0';

export function localTelephony(_scope: Scope): TelephonyDriver {
  return {
    async place(call: CallRequest): Promise<PlacedCall> {
      const digit = digitOf(call.to);
      const id = `CAlocal${digit}${createHash('sha256').update(call.reference).digest('hex').slice(0, 31)}`;
      return { id, played: OUTCOMES[digit] ?? OUTCOMES[0] };
    },
    async hangUp(): Promise<void> {},
    async fetch(providerId: string): Promise<CallUpdate | undefined> {
      if (!providerId.startsWith('CAlocal')) return undefined;
      const digit = providerId.charAt('CAlocal'.length);
      if (digit === '9') return { status: 'no-answer' };
      const { afterMs: _, ...last } = (OUTCOMES[digit] ?? OUTCOMES[0]).at(-1)!;
      return last;
    },
  };
}
