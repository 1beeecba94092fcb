// What the voice group's records check when written: numbers in E.164 form, and connections of
// the telephony kind.
import { badRequest, notFound } from '../../platform/errors.ts';
import { e164Of } from '../../platform/outbox/suppressions.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import { fieldError } from '../../platform/time/zones.ts';
import type { WriteContext } from '../../platform/write.ts';

/** The E.164 form of a number written in `field`; 422 naming the field when it is none. */
export function phoneField(written: string, field: string): string {
  const number = e164Of(written);
  if (!number) throw fieldError(field, 'must be a phone number in international form, like +14155550100');
  return number;
}

/** 404 for an unknown connection, 400 for one that is not a telephony connection. */
export async function checkConnectionKind(w: WriteContext, id: string): Promise<void> {
  const connection = await selectIn(w.tx, 'connections', w.scope).select('kind').where('id', '=', id).executeTakeFirst();
  if (!connection) throw notFound('Connection not found');
  if (connection.kind !== 'telephony') throw badRequest(`Connection ${id} is a ${connection.kind} connection, not telephony`, 'connection_id');
}
