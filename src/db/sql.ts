// The few expressions whose SQL differs between the stores.
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Dialect } from './database.ts';

/** Escapes LIKE wildcards so user input matches literally. */
function likePattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Case-insensitive "contains". */
export function containsInsensitive(dialect: Dialect, column: string, value: string): RawBuilder<SqlBool> {
  const op = dialect === 'postgres' ? sql`ilike` : sql`like`;
  return sql<SqlBool>`${sql.ref(column)} ${op} ${likePattern(value)} escape '\\'`;
}

/** True when the JSON array in `column` holds the string `value`. */
export function jsonArrayHas(dialect: Dialect, column: string, value: string): RawBuilder<SqlBool> {
  if (dialect === 'postgres') return sql<SqlBool>`${sql.ref(column)} @> ${JSON.stringify([value])}::jsonb`;
  return sql<SqlBool>`exists (select 1 from json_each(${sql.ref(column)}) where json_each.value = ${value})`;
}

/** A JSON column value as stored: text on SQLite, parsed by the driver on PostgreSQL. */
export function parseJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}
