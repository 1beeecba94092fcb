// What suppressions do beyond the kernel's CRUD: a manual entry is checked against its channel and
// against the address's suppression (one per channel and address: the first reason stands), and a
// suppression the recipient asked for is never removed. A number is read as contacts' phones are
// (platform/phone.ts): any writing of it, a national one in the organization's phone region.
import { conflict, validationError } from '../../platform/errors.ts';
import { addressProblem, heldSuppression, normalizeAddress, RECIPIENT_REASONS, type Channel } from '../../platform/outbox/suppressions.ts';
import { readPhoneIn } from '../../platform/phone-region.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { WriteContext } from '../../platform/write.ts';

/** The address in its stored form (an e-mail address lower-cased, a number in E.164), or 422 at `address`. */
async function storedAddress(w: WriteContext, channel: Channel, written: string): Promise<string> {
  const refused = (msg: string) => validationError([{ loc: ['body', 'address'], msg, type: 'value_error' }]);
  if (channel !== 'email') {
    const reading = await readPhoneIn(w, written);
    if ('problem' in reading) throw refused(reading.problem);
    return reading.e164;
  }
  const address = normalizeAddress(channel, written);
  const problem = addressProblem(channel, address);
  if (problem) throw refused(problem);
  return address;
}

/** A create (the only write: suppressions have no update): the address in its stored form, valid for its channel and not suppressed yet. */
export async function beforeWrite(w: WriteContext, row: Record<string, unknown>): Promise<void> {
  const channel = row.channel as Channel;
  const address = await storedAddress(w, channel, row.address as string);
  row.address = address;
  // Every write of the tenant holds its lock: nothing suppresses the address between this read and the insert.
  const held = await heldSuppression(w, channel, address);
  if (held) throw conflict(`Address ${address} is already suppressed on ${channel} (${held.reason}): suppression ${held.id}`);
}

export async function beforeDelete(_w: WriteContext, row: Row): Promise<void> {
  if (RECIPIENT_REASONS.has(row.reason as string)) {
    const what = row.reason === 'complaint' ? 'a complaint' : 'an unsubscribe';
    throw conflict(`A suppression for ${what} cannot be removed: the recipient asked not to receive messages. Only manual and hard_bounce suppressions can be removed`);
  }
}
