// What creating a deal reads before it writes: the contacts it is created with, for one create or
// for a group commit's run of them in one statement (ReadAhead in platform/write.ts). No write of
// deals changes a contact. Apart from the store, so that the resource definition can name it
// without an import cycle.
import type { Row } from '../../platform/resource/define.ts';
import type { ReadAhead } from '../../platform/write.ts';
import { readRows } from '../contacts/contacts.store.ts';

/** The contacts given to a new deal (`contacts`), as they are: those among them that exist. */
export const createReads: ReadAhead<string[], Row[]> = {
  key: (_row, input) => ((input.contacts ?? []) as Array<{ contact_id: string }>).map((link) => link.contact_id),
  async read(tx, dialect, scope, keys) {
    const found = new Map((await readRows(tx, dialect, scope, [...new Set(keys.flat())])).map((row) => [row.id, row]));
    return keys.map((ids) => ids.flatMap((id) => found.get(id) ?? []));
  },
};
