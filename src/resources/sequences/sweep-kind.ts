// The scheduler's job kind by name (its handler, scheduler.ts, steps the enrollments that write it):
// one job per live sequence, under the sequence's key, due when its next enrollment is.
export const SWEEP = { name: 'sequences.sweep', maxAttempts: 20 } as const;
export interface SweepPayload {
  sequence_id: string;
}
export const sweepKey = (sequenceId: string) => `sequence.sweep:${sequenceId}`;
