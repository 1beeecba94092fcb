// The voice group's job kinds by name (their handlers: voice.jobs.ts), so the writes that enqueue
// them need not import the handlers: one dialer job per running session under the session's key,
// and per call its placing, the local driver's played updates, hang-ups and its reconciliation
// (under the call's key, moved on by each update).
import type { CallUpdate } from '../../platform/providers/telephony/telephony.ts';

export const DIAL = { name: 'voice.dial', maxAttempts: 20 } as const;
export const PLACE = { name: 'voice.place', maxAttempts: 5 } as const;
export const PLAYED = { name: 'voice.played', maxAttempts: 10 } as const;
export const HANG_UP = { name: 'voice.hang_up', maxAttempts: 10 } as const;
export const RECONCILE = { name: 'voice.reconcile', maxAttempts: 20 } as const;

export interface DialPayload { session_id: string }
export interface CallPayload { call_id: string }
export interface PlayedPayload { call_id: string; update: CallUpdate }
export interface HangUpPayload { call_id: string; status: 'canceled' | 'completed' }

export const dialKey = (sessionId: string) => `voice.dial:${sessionId}`;
export const reconcileKey = (callId: string) => `voice.reconcile:${callId}`;
