// What a driver of any kind throws when the provider refused a send for good, as against any other
// error, which the outbox takes as transient (nothing was accepted: the send is tried again later).

/**
 * A refusal the provider gave for good (SMTP 5xx, a recipient refused, a number that cannot take
 * texts): retrying cannot help. `response` is what the provider said.
 */
export class PermanentSendError extends Error {
  readonly response: string;
  constructor(message: string, response: string) {
    super(message);
    this.response = response;
  }
}
