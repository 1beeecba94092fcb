// What members do beyond plain CRUD: `search` looks in names and e-mail addresses; a member who is
// the assignee of open work is not deleted (assignee.ts).
import { sql, type SqlBool } from 'kysely';
import { containsPattern } from '../../db/sql.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { WriteContext } from '../../platform/write.ts';
import { refuseWhileAssigned } from './assignee.ts';

/** The `search` filter: name or e-mail contains the text, ignoring case (e-mails are stored lower-case). */
export const nameOrEmailContains = (table: string, value: string) => {
  const pattern = containsPattern(value.toLowerCase());
  return sql<SqlBool>`(lower(${sql.ref(`${table}.name`)}) like ${pattern} escape '\\' or ${sql.ref(`${table}.email`)} like ${pattern} escape '\\')`;
};

export async function beforeDelete(w: WriteContext, row: Row): Promise<void> {
  await refuseWhileAssigned(w.tx, w.scope, row.id);
}
