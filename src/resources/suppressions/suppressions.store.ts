// What suppressions do beyond the kernel's CRUD: a manual entry is checked against its channel and
// against the address's suppression (one per channel and address: the first reason stands), and a
// suppression the recipient asked for is never removed.
import { conflict, validationError } from '../../platform/errors.ts';
import { addressProblem, heldSuppression, normalizeAddress, RECIPIENT_REASONS, type Channel } from '../../platform/outbox/suppressions.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { WriteContext } from '../../platform/write.ts';

/** A create (the only write: suppressions have no update): the address in its stored form, valid for its channel and not suppressed yet. */
export async function beforeWrite(w: WriteContext, row: Record<string, unknown>): Promise<void> {
  const channel = row.channel as Channel;
  const address = normalizeAddress(channel, row.address as string);
  const problem = addressProblem(channel, address);
  if (problem) throw validationError([{ loc: ['body', 'address'], msg: problem, type: 'value_error' }]);
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
