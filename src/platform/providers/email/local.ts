// The local e-mail driver: sends nothing, and answers at once with an outcome the address decides,
// so a test drives a whole flow without a server (like a payment API's test card numbers). An
// address whose local part is `bounce` or carries `+bounce` (`ada+bounce@example.com`) bounces, as a
// mailbox that does not exist would; every other address is delivered. What happens next (opened,
// clicked, replied) a test says with `POST /v1/outbox/{id}/simulate`.
import type { Scope } from '../../scope.ts';
import type { EmailDriver, EmailMessage, SendAnswer } from './email.ts';

const bounces = (address: string) => /^(bounce|[^@]*\+bounce)@/i.test(address);

export function localEmail(_scope: Scope): EmailDriver {
  return {
    async send(message: EmailMessage): Promise<SendAnswer> {
      const rejected = message.to.filter(bounces);
      return {
        accepted: message.to.filter((to) => !bounces(to)), rejected,
        response: rejected.length > 0 ? '550 5.1.1 Recipient address rejected (local driver)' : '250 2.0.0 Recorded by the local driver; nothing was sent',
        outcome: rejected.length > 0 ? 'bounced' : 'delivered',
      };
    },
    async verify() {
      return '250 The local driver sends nothing; messages are recorded in the outbox';
    },
  };
}
