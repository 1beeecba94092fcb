// What creating a deal reads before it writes: which of the contacts it is created with exist, for
// one create or for a group commit's run of them in one statement (ReadAhead in platform/write.ts).
// No write of deals changes a contact. Apart from the store, so that the resource definition can
// name it without an import cycle.
import type { ReadAhead } from '../../platform/write.ts';
import { existingIds } from '../contacts/contact-ids.ts';

/** The contacts given to a new deal (`contacts`): the ids among them of contacts that exist. */
export const createReads: ReadAhead<string[], string[]> = {
  key: (_row, input) => ((input.contacts ?? []) as Array<{ contact_id: string }>).map((link) => link.contact_id),
  async read(tx, dialect, scope, keys) {
    const found = await existingIds(tx, dialect, scope, [...new Set(keys.flat())]);
    return keys.map((ids) => ids.filter((id) => found.has(id)));
  },
};
