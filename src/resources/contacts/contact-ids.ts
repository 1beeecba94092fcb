// Which contacts exist, for the groups that name contacts by id (a new deal's contacts). A module of
// its own, importing no group: a group that imports the contacts' store would import, through it,
// the groups the contacts' store imports, and make a cycle of them.
import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.ts';
import { statement } from '../../db/prepared.ts';
import type { DB } from '../../db/schema.ts';
import { inTextList, textList } from '../../db/sql.ts';
import type { Scope } from '../../platform/scope.ts';

// Which of the contacts named by id exist, the ids one parameter (an array, JSON on SQLite): one
// text for any number of them, answered from the tenant's index without reading a row.
const existingSql = (dialect: Dialect) => `select id from contacts where org_id = ? and mode = ? and id ${inTextList(dialect)}`;
const EXISTING = statement<{ id: string }>({ sqlite: existingSql('sqlite'), postgres: existingSql('postgres') });

/** The ids among `ids` of contacts that exist, in one statement. */
export async function existingIds(db: Kysely<DB>, dialect: Dialect, scope: Scope, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await EXISTING.all(db, dialect, [scope.orgId, scope.mode, textList(dialect, ids)]);
  return new Set(rows.map((row) => row.id));
}
