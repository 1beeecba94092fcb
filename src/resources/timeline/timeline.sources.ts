// The registry of timeline sources: what a contact's, company's or deal's timeline is made of. A
// group adds itself with one entry here (a `TimelineSource`, see timeline.ts).
import { associatedWith } from '../../platform/resource/associations.ts';
import type { Resource } from '../../platform/resource/define.ts';
import { capitalized } from '../../platform/resource/words.ts';
import { present } from '../../platform/resource/store.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import { toEvent } from '../events/events.store.ts';
import { presentStageHistory } from '../deals/stage-history.ts';
import { notes } from '../notes/notes.resource.ts';
import { quotes } from '../quotes/quotes.resource.ts';
import { tasks } from '../tasks/tasks.resource.ts';
import type { TimelineSource } from './timeline.ts';

const firstLine = (text: string, max = 140) => {
  const line = text.trim().split('\n')[0];
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** The records of `r` associated with the timeline's record, dated by their creation. */
const associated = (r: Resource, type: string, summary: (record: Record<string, unknown>) => string): TimelineSource => ({
  type, records: ['contacts', 'companies', 'deals'], at: 'created_at', key: 'id',
  query: ({ db, scope }, record) => selectIn(db, r.table, scope).where(associatedWith(r.table, record.id)),
  present: async ({ db, scope }, rows) => (await present(r, db, scope, rows as never)).map((object) => ({ summary: summary(object), object })),
});

export const timelineSources: TimelineSource[] = [
  {
    // The record's own events (created, updated, contacts put on a deal, …), as GET /v1/events shows them.
    type: 'event', records: ['contacts', 'companies', 'deals'], at: 'created_at', key: 'id',
    query: ({ db, scope, covered }, record) => {
      const q = selectIn(db, 'events', scope).where('object_id', '=', record.id);
      return covered.length > 0 ? q.where('type', 'not in', covered) : q;
    },
    present: async (_ctx, rows) => rows.map((row) => {
      const event = toEvent(row as never);
      return { summary: capitalized(event.type.replace('.', ' ').replaceAll('_', ' ')), object: event };
    }),
  },
  associated(notes, 'note', (note) => `Note: ${firstLine(String(note.content))}`),
  associated(tasks, 'task', (task) => `${capitalized(String(task.type))} task${task.status === 'completed' ? ' (completed)' : task.overdue ? ' (overdue)' : ''}: ${firstLine(String(task.title))}`),
  {
    // Each stage a deal entered (its creation included), with the time spent there.
    type: 'stage_change', records: ['deals'], covers: ['deal.stage_changed'], at: 'entered_at', key: 'id',
    query: ({ db, scope }, record) => selectIn(db, 'deal_stage_history', scope).where('deal_id', '=', record.id),
    present: async ({ db, scope }, rows) => (await presentStageHistory(db, scope, rows as never)).map((stay) => ({ summary: `Entered stage ${stay.stage_name ?? stay.stage_id}`, object: stay })),
  },
  {
    // The quotes made for a contact or a deal, in their state as of now.
    type: 'quote', records: ['contacts', 'deals'], at: 'created_at', key: 'id',
    query: ({ db, scope }, record) => selectIn(db, 'quotes', scope).where(record.table === 'contacts' ? 'contact_id' : 'deal_id', '=', record.id),
    present: async ({ db, scope }, rows) => (await present(quotes, db, scope, rows as never)).map((quote) => ({
      summary: `Quote ${String(quote.number)} (${String(quote.status)}): ${firstLine(String(quote.title))}`, object: quote,
    })),
  },
  {
    // The campaigns a contact was enrolled in at their launch.
    type: 'campaign_enrollment', records: ['contacts'], at: 'created_at', key: 'campaign_id',
    query: ({ db, scope }, record) => selectIn(db, 'campaign_enrollments', scope).where('contact_id', '=', record.id),
    present: async ({ db, scope }, rows) => {
      const ids = rows.map((row) => String(row.campaign_id));
      const names = new Map((await selectIn(db, 'campaigns', scope).select(['id', 'name']).where('id', 'in', ids).execute()).map((c) => [c.id, c.name]));
      return rows.map((row) => ({
        summary: `Enrolled in campaign ${names.get(String(row.campaign_id)) ?? row.campaign_id}`,
        object: { campaign_id: row.campaign_id, campaign_name: names.get(String(row.campaign_id)) ?? null, contact_id: row.contact_id, enrolled_at: Number(row.created_at) },
      }));
    },
  },
];
