// Checking a rate limit from the client side without false alarms: a request was admitted at some
// moment between sending it and receiving its answer, so requests sent at or after t and answered
// before t + window were certainly admitted inside one window. The largest such count must never
// exceed the limit.

export interface Timed {
  sent: number;
  done: number;
  status: number;
}

export function mostAdmittedInAnyWindow(results: readonly Timed[], windowMs: number): number {
  const passed = results.filter((r) => r.status !== 429).sort((a, b) => a.sent - b.sent);
  let most = 0;
  for (const start of passed) {
    const inside = passed.filter((r) => r.sent >= start.sent && r.done < start.sent + windowMs).length;
    most = Math.max(most, inside);
  }
  return most;
}

/** Runs `send` and records when it was sent and answered, on the wall clock the limiters use. */
export async function timed(send: () => Promise<{ status: number }>): Promise<Timed> {
  const sent = Date.now();
  const { status } = await send();
  return { sent, done: Date.now(), status };
}
