// The full-text index of a searchable resource, in each store's own engine, and the expressions that
// query it. Both stores see the same words: runs of letters and digits, case-folded, so `q` means the
// same thing on either (every word of `q` is the beginning of a word of one of the indexed fields).
// The migrations create the index (createSearchIndex of src/db/migration-helpers.ts):
// SQLite: an FTS5 table `<table>_search` over the fields (external content, keyed by the row's rowid),
//   kept in step by triggers, so every writer of the table (the kernel, the sandbox seed, bulk
//   relinks) maintains it in its own transaction. A VACUUM may renumber rowids: run
//   `insert into <table>_search(<table>_search) values('rebuild')` after one.
// PostgreSQL: a GIN index on the `simple` tsvector of the fields, an expression of the row itself, so
//   it is current as soon as the row is, with no trigger at all. `pgDocument` must name the index's
//   expression exactly, or the planner cannot use the index.
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Dialect } from '../../db/database.ts';

/** The words of a text as both engines cut it: runs of letters and digits, lower-cased. */
export function searchWords(text: string): string[] {
  return text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
}

export const searchTable = (table: string) => `${table}_search`;

/** The PostgreSQL document of a row: its fields' words, in the form the GIN index holds. */
function pgDocument(table: string, columns: string[]): RawBuilder<unknown> {
  const joined = sql.join(columns.map((c) => sql`coalesce(${sql.ref(`${table}.${c}`)}, '')`), sql` || ' ' || `);
  return sql`to_tsvector('simple'::regconfig, regexp_replace(${joined}, '[^[:alnum:]]+', ' ', 'g'))`;
}

/** The engine's query for `words`: every word, as a prefix. Words are letters and digits only. */
const ftsQuery = (words: string[]) => words.map((w) => `"${w}"*`).join(' AND ');
const tsQuery = (words: string[]) => sql`to_tsquery('simple'::regconfig, ${words.map((w) => `${w}:*`).join(' & ')})`;

/** True for the rows of `table` whose indexed fields hold every word of `words` as a prefix. */
export function textMatch(dialect: Dialect, table: string, columns: string[], words: string[]): RawBuilder<SqlBool> {
  if (dialect === 'postgres') return sql<SqlBool>`${pgDocument(table, columns)} @@ ${tsQuery(words)}`;
  const fts = searchTable(table);
  return sql<SqlBool>`${sql.ref(`${table}.rowid`)} in (select rowid from ${sql.id(fts)} where ${sql.id(fts)} match ${ftsQuery(words)})`;
}

/**
 * How well a matching row fits `words`, larger is better. SQLite's bm25 (through the FTS table's
 * `rank`, negative: smaller is better, so it is negated) and PostgreSQL's ts_rank.
 */
export function textRank(dialect: Dialect, table: string, columns: string[], words: string[]): RawBuilder<number> {
  if (dialect === 'postgres') return sql<number>`ts_rank(${pgDocument(table, columns)}, ${tsQuery(words)})`;
  const fts = searchTable(table);
  return sql<number>`-(select rank from ${sql.id(fts)} where ${sql.id(fts)} match ${ftsQuery(words)} and ${sql.id(fts)}.rowid = ${sql.ref(`${table}.rowid`)})`;
}
