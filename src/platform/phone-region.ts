// The organization's phone region (`organizations.phone_region`), for the writes that take phone
// numbers: read only for a number written without `+`, once per transaction (`w.shared`).
import { validationError } from './errors.ts';
import { readPhone, needsRegion, type PhoneReading } from './phone.ts';
import type { WriteContext } from './write.ts';

/** The name of the region's shared read: `PATCH /v1/organization` forgets it (`w.changed`). */
export const PHONE_REGION = 'phone-region';

export const phoneRegionOf = (w: WriteContext): Promise<string | null> =>
  w.shared(PHONE_REGION, async () => {
    const org = await w.tx.selectFrom('organizations').select('phone_region').where('id', '=', w.scope.orgId).executeTakeFirst();
    return org?.phone_region ?? null;
  });

/** `written` read as E.164 in the write's organization: a national number in its phone region. */
export async function readPhoneIn(w: WriteContext, written: string): Promise<PhoneReading> {
  return readPhone(written, needsRegion(written) ? await phoneRegionOf(w) : null);
}

/**
 * Stores `row[field]` in E.164, a national number read in the organization's region; a number that
 * is none is 422 naming the field. Null or blank text is left as given (it clears the field).
 */
export async function storePhoneIn(w: WriteContext, row: Record<string, unknown>, field: string): Promise<void> {
  const written = row[field];
  if (typeof written !== 'string' || written.trim() === '') return;
  const reading = await readPhoneIn(w, written);
  if ('problem' in reading) throw validationError([{ loc: ['body', field], msg: reading.problem, type: 'value_error.phone' }]);
  row[field] = reading.e164;
}
