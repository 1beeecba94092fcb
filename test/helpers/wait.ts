// The one wait of the tests: polls `what` until `done` holds, with a generous outer bound (a busy
// machine slows a test down rather than failing it); the error shows the last value read.
export async function waitFor<T>(what: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await what();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
