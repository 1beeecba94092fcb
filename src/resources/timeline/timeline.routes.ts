// GET /v1/{contacts|companies|deals}/{id}/timeline: the record's timeline, newest first, in the usual
// list envelope with keyset cursors and an exact total. An unknown record is 404 with its message.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { paginate } from '../../platform/pagination.ts';
import { withArticle } from '../../platform/resource/words.ts';
import { getRow } from '../../platform/resource/store.ts';
import { errorResponses, ListOf, PageQuery, Timestamp } from '../../platform/schemas.ts';
import { companies } from '../companies/companies.resource.ts';
import { contacts } from '../contacts/contacts.resource.ts';
import { deals } from '../deals/deals.resource.ts';
import { positionKey, presentTimeline, timelineCount, timelineOf, timelinePage, type TimelineRecord } from './timeline.ts';
import { timelineSources } from './timeline.sources.ts';

const TimelineItemSchema = Type.Object({
  type: Type.String({ description: `What the item is: ${timelineSources.map((s) => `\`${s.type}\``).join(', ')}`, examples: ['note'] }),
  occurred_at: Timestamp('When it happened, unix seconds'),
  summary: Type.String({ description: 'One line saying what happened', examples: ['Note: Called Ada; sending pricing on Monday'] }),
  object: Type.Object({}, {
    additionalProperties: true,
    description: 'The underlying object as its own endpoint shows it: the event, note, task, stage stay or campaign enrollment',
    examples: [{ id: 'nte_01JD8X4M6R2T9Q3V5W7Y8Z0A1B', content: 'Called Ada; sending pricing on Monday' }],
  }),
}, { description: 'One thing that happened to the record' });

const TimelineQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export async function timelineRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  for (const r of [contacts, companies, deals]) {
    const table = r.table as TimelineRecord;
    const kinds = timelineSources.filter((s) => s.records.includes(table)).map((s) => `\`${s.type}\``).join(', ');
    app.get(`/${r.plural}/:id/timeline`, {
      schema: {
        tags: ['Timelines'], summary: `Get the timeline of ${withArticle(r.name)}`,
        description: `Everything that happened to the ${r.name}, newest first, in one paged stream (${kinds}): each item \`{type, occurred_at, summary, object}\`. Cursors walk it without skipping or repeating an item while others write. Unknown ${r.name}: 404 \`${r.notFound}\`.`,
        params: r.schemas.params, querystring: TimelineQuery, response: { 200: ListOf(TimelineItemSchema, `A page of the ${r.name}'s timeline`), ...errorResponses(404) },
      },
    }, async (req) => {
      const db = app.services.database.db;
      const record = { table, id: (await getRow(r, db, app.services.database.dialect, req.scope, req.params.id)).id };
      const { own, ctx } = timelineOf(timelineSources, table, db, req.scope);
      return paginate(req, req.query, {
        fetch: (page) => timelinePage(own, ctx, record, page),
        count: () => timelineCount(own, ctx, record),
        keyOf: positionKey,
        map: (placed) => presentTimeline(ctx, placed),
      });
    });
  }
}
