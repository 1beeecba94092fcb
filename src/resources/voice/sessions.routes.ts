// A dialer session's numbers: its calls by state and disposition, talk time and the contacts it
// skipped, counted from its calls (one grouped read) and its row.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { parseJson } from '../../db/sql.ts';
import { notFound } from '../../platform/errors.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import { Data, errorResponses } from '../../platform/schemas.ts';
import { dialerSessions } from './sessions.resource.ts';

const n = (description: string) => Type.Integer({ minimum: 0, description, examples: [3] });
const Stats = Type.Object({
  session_id: Type.String({ examples: ['dls_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  dialed: n('Calls placed'),
  in_flight: n('Calls not yet ended'),
  connected: n('Calls answered by a person and connected to the agent'),
  voicemail: n('Calls answered by a machine'),
  no_answer: n('Calls not answered'),
  busy: n('Calls that found the line busy'),
  failed: n('Calls that failed'),
  canceled: n('Calls dropped (another call took the agent) or canceled'),
  average_talk_seconds: Type.Number({ minimum: 0, description: 'Average seconds talked over the connected calls; 0 without any', examples: [94.5] }),
  by_disposition: Type.Record(Type.String(), Type.Integer(), { description: 'Calls by disposition', examples: [{ meeting_booked: 2, not_interested: 5 }] }),
  skipped: Type.Record(Type.String(), Type.Integer(), { description: 'Contacts skipped, by reason: `no_phone`, `suppressed`, `deleted`, and `outside_window` (they wait for their hours and are called then)', examples: [{ no_phone: 4, outside_window: 12 }] }),
}, { title: 'DialerSessionStats' });

export async function sessionRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/sessions/:id/stats', {
    schema: {
      tags: [dialerSessions.tag], operationId: 'getDialerSessionStats', summary: 'Get a dialer session\'s numbers',
      description: 'What the session did so far: calls placed and how they ended, connected calls\' average talk time, calls by disposition, and the contacts it skipped, exact.',
      params: dialerSessions.schemas.params, response: { 200: Data(Stats, 'The session\'s numbers'), ...errorResponses(404) },
    },
  }, async (req) => {
    const { db } = req.server.services.database;
    const session = await selectIn(db, 'dialer_sessions', req.scope).select(['id', 'skipped']).where('id', '=', req.params.id).executeTakeFirst();
    if (!session) throw notFound(dialerSessions.notFound);
    const rows = await selectIn(db, 'calls', req.scope)
      .select(['status', 'answered_by', 'disposition', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.sum<number>('duration').as('talk')])
      .where('session_id', '=', session.id).groupBy(['status', 'answered_by', 'disposition']).execute();
    const stats = { dialed: 0, in_flight: 0, connected: 0, voicemail: 0, no_answer: 0, busy: 0, failed: 0, canceled: 0 };
    const byDisposition: Record<string, number> = {};
    let talk = 0;
    for (const row of rows) {
      const count = Number(row.n);
      stats.dialed += count;
      if (row.disposition) byDisposition[row.disposition] = (byDisposition[row.disposition] ?? 0) + count;
      if (row.status === 'queued' || row.status === 'ringing' || row.status === 'in-progress') stats.in_flight += count;
      else if (row.answered_by === 'machine') stats.voicemail += count;
      else if (row.status === 'completed') {
        stats.connected += count;
        talk += Number(row.talk ?? 0);
      } else if (row.status === 'no-answer') stats.no_answer += count;
      else stats[row.status as 'busy' | 'failed' | 'canceled'] += count;
    }
    return {
      data: {
        session_id: session.id, ...stats, average_talk_seconds: stats.connected ? Math.round((talk / stats.connected) * 10) / 10 : 0,
        by_disposition: byDisposition, skipped: parseJson<Record<string, number>>(session.skipped) ?? {},
      },
    };
  });
}
