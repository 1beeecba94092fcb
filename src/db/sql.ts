// The few expressions whose SQL differs between the stores.
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Dialect } from './database.ts';

/**
 * `in` a list of texts given as one parameter (an array on PostgreSQL, JSON on SQLite; see
 * `textList`): one statement text for any number of values, each looked up on its index.
 */
export const inTextList = (dialect: Dialect): string => (dialect === 'postgres' ? '= any(?::text[])' : 'in (select value from json_each(?))');

/** The parameter `inTextList` takes for `values`. */
export const textList = (dialect: Dialect, values: string[]): unknown => (dialect === 'postgres' ? values : JSON.stringify(values));

/** A column by name, or an expression. */
type Operand = string | RawBuilder<unknown>;
const operand = (c: Operand) => (typeof c === 'string' ? sql.ref(c) : c);

/** Escapes LIKE wildcards so user input matches literally. */
const escapeLike = (value: string) => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Case-insensitive LIKE for a pattern already escaped (`containsPattern`). */
export function likeInsensitive(dialect: Dialect, column: Operand, pattern: string): RawBuilder<SqlBool> {
  const op = dialect === 'postgres' ? sql`ilike` : sql`like`;
  return sql<SqlBool>`${operand(column)} ${op} ${pattern} escape '\\'`;
}

/** The pattern "contains `value`" binds (a statement's parameter). */
export const containsPattern = (value: string) => `%${escapeLike(value)}%`;

/** Case-insensitive "contains". */
export const containsInsensitive = (dialect: Dialect, column: Operand, value: string) => likeInsensitive(dialect, column, containsPattern(value));

/** Case-insensitive "starts with". */
export const startsWithInsensitive = (dialect: Dialect, column: Operand, value: string) => likeInsensitive(dialect, column, `${escapeLike(value)}%`);

/** The parameter `jsonArrayHas` binds for `value`. */
export const jsonArrayParam = (dialect: Dialect, value: string): string => (dialect === 'postgres' ? JSON.stringify([value]) : value);

/** True when the JSON array in `column` holds the string `value`. */
export const jsonArrayHas = (dialect: Dialect, column: Operand, value: string) => jsonArrayHolds(dialect, column, jsonArrayParam(dialect, value));

/** The same for the parameter `jsonArrayParam` made. */
export function jsonArrayHolds(dialect: Dialect, column: Operand, param: string): RawBuilder<SqlBool> {
  if (dialect === 'postgres') return sql<SqlBool>`${operand(column)} @> ${param}::jsonb`;
  return sql<SqlBool>`exists (select 1 from json_each(${operand(column)}) where json_each.value = ${param})`;
}

/** A JSON column value as stored: text on SQLite, parsed by the driver on PostgreSQL. */
export function parseJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}
