// What the voice group's records check when written: connections of the telephony kind (numbers
// are stored in E.164 by platform/phone-region.ts, as contacts' phones are).
import { badRequest, notFound } from '../../platform/errors.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';

/** 404 for an unknown connection, 400 for one that is not a telephony connection. */
export async function checkConnectionKind(w: WriteContext, id: string): Promise<void> {
  const connection = await selectIn(w.tx, 'connections', w.scope).select('kind').where('id', '=', id).executeTakeFirst();
  if (!connection) throw notFound('Connection not found');
  if (connection.kind !== 'telephony') throw badRequest(`Connection ${id} is a ${connection.kind} connection, not telephony`, 'connection_id');
}
