// Timelines: one newest-first stream of what happened to a contact, company or deal, merged from a
// registry of sources (timeline.sources.ts). A source says how to query its rows about a record, which
// columns date and identify them, and how to present them; this file pages the merge. The order is
// occurred_at, then the time-ordered part of the key (the id after its three-letter prefix: creation
// order, across sources), then the source type, all descending. Every item has one place in it, and
// an item written later sorts before every item already there, so keyset cursors never skip or
// repeat an item while others write.
import { sql, type Kysely, type SqlBool } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { cursorError } from '../../platform/errors.ts';
import type { EventType } from '../../platform/event-types.ts';
import type { PageRequest } from '../../platform/pagination.ts';
import type { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';

/** The kinds of record that have a timeline, by table. */
export type TimelineRecord = 'contacts' | 'companies' | 'deals';

export interface TimelineContext {
  db: Kysely<DB>;
  scope: Scope;
  /** Event types some source tells its own way; the events source leaves them out. */
  covered: readonly string[];
}

type SourceRow = Record<string, unknown>;

export interface TimelineSource {
  /** The item `type`; between items of one second, also their order. */
  type: string;
  /** The records whose timelines it feeds. */
  records: readonly TimelineRecord[];
  /** Event types this source already tells (e.g. stage changes): left out of the record's events. */
  covers?: readonly EventType[];
  /** The tenant's rows of the source about the record (from `selectIn`, so scoped to the tenant). */
  query(ctx: TimelineContext, record: { table: TimelineRecord; id: string }): ReturnType<typeof selectIn>;
  /** The column of when the item happened (unix seconds), and of an id unique within the source (`newId`'s: `xxx_` then time-ordered). */
  at: string;
  key: string;
  /** The summary and object of each row, in order. */
  present(ctx: TimelineContext, rows: SourceRow[]): Promise<Array<{ summary: string; object: object }>>;
}

export interface TimelineItem {
  type: string;
  occurred_at: number;
  summary: string;
  object: object;
}

interface Placed {
  source: TimelineSource;
  at: number;
  key: string;
  row: SourceRow;
}

interface Position { at: number; type: string; key: string }

const PREFIX = 'xxx_'.length;
/** The time-ordered part of a key. */
const ordered = (key: string) => key.slice(PREFIX);
const orderedSql = (source: TimelineSource) => sql<string>`substr(${sql.ref(source.key)}, ${PREFIX + 1})`;
const descending = (a: string, b: string) => (a === b ? 0 : a < b ? 1 : -1);

/** Newest first: by time, then the key's time-ordered part, then the source type. */
const newerFirst = (a: Position, b: Position) => b.at - a.at || descending(a.key, b.key) || descending(a.type, b.type);

/** The rows of `source` strictly after position `p` in the timeline's order. */
function after(source: TimelineSource, q: ReturnType<typeof selectIn>, p: Position) {
  const at = sql.ref(source.at);
  // An equal key of a source of a smaller type comes after the position too.
  const cmp = sql.raw(source.type < p.type ? '<=' : '<');
  return q.where(sql<SqlBool>`(${at} < ${p.at} or (${at} = ${p.at} and ${orderedSql(source)} ${cmp} ${p.key}))`);
}

export const positionKey = (p: Placed) => JSON.stringify([p.at, p.key, p.source.type]);

function parsePosition(raw: string | number): Position {
  try {
    const [at, key, type] = JSON.parse(String(raw)) as unknown[];
    if (typeof at === 'number' && typeof type === 'string' && typeof key === 'string') return { at, type, key };
  } catch {
    // answered below
  }
  throw cursorError('Malformed cursor: pass back a next_cursor exactly as returned');
}

/** The sources of a kind of record, with the context they run in. */
export function timelineOf(sources: readonly TimelineSource[], table: TimelineRecord, db: Kysely<DB>, scope: Scope) {
  const own = sources.filter((s) => s.records.includes(table));
  const ctx: TimelineContext = { db, scope, covered: own.flatMap((s) => s.covers ?? []) };
  return { own, ctx };
}

/** One page of a record's timeline: up to `take` items in order, each source read once. */
export async function timelinePage(sources: readonly TimelineSource[], ctx: TimelineContext, record: { table: TimelineRecord; id: string }, page: PageRequest): Promise<Placed[]> {
  const position = page.after === undefined ? undefined : parsePosition(page.after);
  // Each source gives its first offset + take rows; the merge then skips the offset.
  const perSource = page.offset + page.take;
  const pages = await Promise.all(sources.map(async (source) => {
    let q = source.query(ctx, record);
    if (position) q = after(source, q, position);
    const rows = await q.selectAll().orderBy(sql.ref(source.at), 'desc').orderBy(orderedSql(source), 'desc').limit(perSource).execute() as SourceRow[];
    return rows.map((row): Placed => ({ source, at: Number(row[source.at]), key: ordered(String(row[source.key])), row }));
  }));
  return pages.flat().sort((a, b) => newerFirst({ ...a, type: a.source.type }, { ...b, type: b.source.type })).slice(page.offset, page.offset + page.take);
}

/** The exact number of items of a record's timeline. */
export async function timelineCount(sources: readonly TimelineSource[], ctx: TimelineContext, record: { table: TimelineRecord; id: string }): Promise<number> {
  const counts = await Promise.all(sources.map(async (s) =>
    Number((await s.query(ctx, record).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow() as { n: number }).n)));
  return counts.reduce((a, b) => a + b, 0);
}

/** The API form of a page: each source presents its own rows (one call per source). */
export async function presentTimeline(ctx: TimelineContext, placed: Placed[]): Promise<TimelineItem[]> {
  const out: TimelineItem[] = new Array(placed.length);
  const bySource = new Map<TimelineSource, number[]>();
  placed.forEach((p, i) => bySource.set(p.source, [...(bySource.get(p.source) ?? []), i]));
  await Promise.all([...bySource].map(async ([source, indexes]) => {
    const shown = await source.present(ctx, indexes.map((i) => placed[i].row));
    indexes.forEach((i, j) => { out[i] = { type: source.type, occurred_at: placed[i].at, ...shown[j] }; });
  }));
  return out;
}
