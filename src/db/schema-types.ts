// Generates the Kysely table types (src/db/schema.generated.ts) from the schema the migrations
// build, so a column is written in a migration and nowhere else by hand. `npm run db:types` writes
// the file; `npm run lint` regenerates it in memory and fails when the file checked in differs.
//
// Why from SQLite in memory: it needs no server, so the lint runs anywhere in about a second, and
// both stores are built by the same migrations. SQLite cannot tell a JSON column from text (the
// migrations make JSON `jsonb` on PostgreSQL, `text` on SQLite), so those are named below, with the
// few types a store cannot say (the `mode` of a tenant). test/db/schema-types.test.ts checks the
// names against PostgreSQL's catalog (its jsonb columns, and every column's nullability), so the
// list cannot drift. (kysely-codegen was not used: it needs a live database, and from SQLite it
// would type JSON as text too.)
import { sql } from 'kysely';
import { openDatabase, type Database } from './database.ts';
import { migrateToLatest } from './migrate.ts';

/** Types a store cannot tell, by `table.column` (`*` for every table). */
export const COLUMN_TYPES: Record<string, string> = {
  '*.mode': 'Mode',
};

/** The JSON columns (jsonb on PostgreSQL): `unknown`, parsed by the code that reads them. */
export const JSON_COLUMNS: Record<string, readonly string[]> = {
  campaigns: ['channels', 'steps', 'schedule', 'mailbox_ids'],
  checklist_stages: ['required_elements', 'recommended_elements', 'channel_scripts'],
  companies: ['tags', 'custom_fields'],
  connections: ['settings'],
  contacts: ['tags', 'custom_fields'],
  deals: ['tags', 'custom_fields'],
  dialer_sessions: ['calling_window', 'skipped'],
  events: ['data', 'previous_attributes'],
  exports: ['filters', 'search'],
  fields: ['options'],
  imports: ['mapping'],
  inbox_messages: ['reference_ids', 'to_addresses', 'cc_addresses'],
  inbox_threads: ['tags'],
  mailboxes: ['warmup'],
  notes: ['custom_fields'],
  outbox_messages: ['to_addresses', 'headers', 'provider_answer'],
  products: ['custom_fields'],
  quotes: ['line_items', 'custom_fields'],
  sending_domains: ['records'],
  sequence_enrollments: ['thread_message_ids'],
  sequence_steps: ['variants'],
  sequences: ['mailbox_ids', 'schedule'],
  tasks: ['custom_fields'],
  voice_rubrics: ['criteria'],
  webhook_deliveries: ['attempts'],
  webhook_endpoints: ['event_types'],
};

/** What a reader of a table or column should know that its type does not say, by `table` or `table.column`. */
const NOTES: Record<string, string> = {
  'agency_grants': 'Access a client (the row\'s organization) offers an agency through a single-use code.',
  'agency_links': 'A client organization an agency (the row\'s organization) may act for, in the row\'s mode.',
  'api_keys.scopes': 'JSON array of scopes, `["*"]` for every scope.',
  'checklist_pipelines.template': 'The built-in template it was made from (`meddpicc`, `bant`, `spiced`), else null.',
  'counters': 'Maintained per-tenant numbers: row totals, the event sequence, the credit balance.',
  'deal_pipelines.is_default': '1 for the tenant\'s default pipeline, else null (a unique index keeps one default).',
  'deal_stage_history.stage_name': 'The stage\'s name once it is deleted (null while it exists: its current name is read).',
  'deals.doc': 'The deal\'s answer as JSON text, null until written again after a change that cleared it (stored-json.ts).',
  'inbox_threads.doc': 'The thread\'s answer as JSON text, null until written again after a change that cleared it (stored-json.ts).',
  'exports.filters': 'JSON: the list route\'s query parameters.',
  'exports.search': 'JSON: a search body (filters, filter groups, full text, sort) selecting the records instead; null for filters.',
  'field_values': 'One row per record and set custom field: what filters, sorting and `unique` read.',
  'fields': 'A custom field\'s definition (see src/platform/resource/custom-fields.ts).',
  'file_chunks': 'A stored file (an import\'s upload, an export\'s CSV) in chunks of about 1 MiB.',
  'idempotency_keys.lease': 'The token of the request holding the claim (0009-idempotency-lease); null on older rows.',
  'idempotency_keys.locked_at': 'Last renewal of the claim\'s lease (seconds); a claim not renewed for LEASE_S is taken over.',
  'imports': 'A CSV import. `write_mode` is the API\'s `mode`: create, upsert or update.',
  'imports.mapping': 'JSON: `{column header: target field}`.',
  'jobs': 'Background work: see src/platform/jobs/. Times are milliseconds.',
  'jobs.schedule_key': 'The tenant\'s key of a scheduled job (`w.schedule`): at most one waiting job per key.',
  'list_members': 'A record (company, deal) on a list of its type.',
  'quote_links': 'The public link of a sent quote, found by its token before the tenant is known. Only the SHA-256 of the token is stored (hex), so a copy of the database opens no quote.',
  'quotes.line_items': 'JSON (see the quotes group\'s line-items.ts).',
  'suppressions': 'An address never sent to again on a channel (one per channel and address): `reason` is unsubscribed, hard_bounce, complaint or manual.',
  'unsubscribe_links': 'The unsubscribe link of one recipient of one message, found by its token before the tenant is known. Only the SHA-256 of the token is stored (hex).',
  'record_associations': 'A record (task, note, …) associated with a contact, company or deal (`target` is its table).',
};

interface Column {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

const NUMBER = /^(integer|int|bigint|smallint|real|double precision|numeric|float)$/;

/** The TypeScript type of a column as SQLite declares it. */
function typeOf(table: string, c: Column): string {
  const named = COLUMN_TYPES[`${table}.${c.name}`] ?? COLUMN_TYPES[`*.${c.name}`];
  if (named) return named;
  if (JSON_COLUMNS[table]?.includes(c.name)) return 'unknown';
  const declared = c.type.toLowerCase();
  if (NUMBER.test(declared)) return 'number';
  if (declared === 'text') return 'string';
  if (declared === 'blob') return 'Uint8Array';
  throw new Error(`${table}.${c.name}: no TypeScript type for the column type "${c.type}"`);
}

const pascal = (table: string) => table.split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join('');

const comment = (note: string | undefined, indent: string) => (note ? `${indent}/** ${note} */\n` : '');

/** A column as the generated types see it. */
export interface ColumnType {
  name: string;
  /** Its TypeScript type. */
  type: string;
  nullable: boolean;
}

/** The service's tables and their columns in `database` (SQLite), by table name in order. */
export async function sqliteTables(database: Database): Promise<Map<string, ColumnType[]>> {
  const all = (await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'table' order by name`.execute(database.db)).rows;
  // Full-text index tables (FTS5, and its shadow tables) are the engine's, not the service's.
  const virtual = all.filter((t) => /^create virtual table/i.test(t.sql)).map((t) => t.name);
  const tables = all.map((t) => t.name).filter((name) => !/^(sqlite_|kysely_)/.test(name) && !virtual.some((v) => name === v || name.startsWith(`${v}_`)));
  const out = new Map<string, ColumnType[]>();
  for (const table of tables) {
    const columns = (await sql<Column>`select name, type, "notnull", pk from pragma_table_info(${table})`.execute(database.db)).rows;
    out.set(table, columns.map((c) => {
      const type = typeOf(table, c);
      // A primary key column is never null (PostgreSQL makes it not null; SQLite would allow it).
      return { name: c.name, type, nullable: !c.notnull && !c.pk && type !== 'unknown' };
    }));
  }
  return out;
}

/** The text of src/db/schema.generated.ts for the schema the migrations build. */
export async function generateSchemaTypes(): Promise<string> {
  const database = openDatabase('sqlite::memory:');
  try {
    await migrateToLatest(database);
    const tables = await sqliteTables(database);
    let out = `// Generated by \`npm run db:types\` from the schema the migrations build (see src/db/schema-types.ts):
// do not edit. Every tenant table carries org_id and mode; timestamps are unix seconds.

export type Mode = 'live' | 'test';
`;
    for (const [table, columns] of tables) {
      out += `\n${comment(NOTES[table], '')}export interface ${pascal(table)}Table {\n`;
      for (const c of columns) out += `${comment(NOTES[`${table}.${c.name}`], '  ')}  ${c.name}: ${c.type}${c.nullable ? ' | null' : ''};\n`;
      out += '}\n';
    }
    out += `\nexport interface DB {\n${[...tables.keys()].map((t) => `  ${t}: ${pascal(t)}Table;\n`).join('')}}\n`;
    return out;
  } finally {
    await database.close();
  }
}
