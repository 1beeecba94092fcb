// A sequence's analytics by step, exact: what became of each step's messages, counted from the
// outbox (each outcome is stamped once on its message) and from the suppressions its unsubscribe
// links made, in two statements whatever the number of messages.
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { stepsOf } from './steps.store.ts';

const stamped = (column: string) => sql<number>`count(${sql.ref(column)})`;

export async function stepAnalytics(db: Kysely<DB>, scope: Scope, sequenceId: string) {
  const messages = () => selectIn(db, 'outbox_messages', scope).where('record_type', '=', 'sequence').where('record_id', '=', sequenceId);
  const rows = await messages()
    .select(['step_id', stamped('sent_at').as('sent'), stamped('delivered_at').as('delivered'), stamped('opened_at').as('opened'),
      stamped('clicked_at').as('clicked'), stamped('replied_at').as('replied'), stamped('bounced_at').as('bounced')])
    .groupBy('step_id').execute();
  const unsubscribed = await messages().innerJoin('suppressions as s', (j) => j.onRef('s.org_id', '=', 'outbox_messages.org_id').onRef('s.mode', '=', 'outbox_messages.mode').onRef('s.message_id', '=', 'outbox_messages.message_id'))
    .select(['outbox_messages.step_id', (eb) => eb.fn.countAll<number>().as('n')]).where('s.reason', '=', 'unsubscribed').groupBy('outbox_messages.step_id').execute();
  const byStep = new Map(rows.map((r) => [r.step_id, r]));
  const unsubscribedBy = new Map(unsubscribed.map((r) => [r.step_id, Number(r.n)]));
  return (await stepsOf(db, scope, sequenceId)).map((step) => {
    const r = byStep.get(step.id);
    return {
      step_id: step.id, step_order: step.step_order, sent: Number(r?.sent ?? 0), delivered: Number(r?.delivered ?? 0), opened: Number(r?.opened ?? 0),
      clicked: Number(r?.clicked ?? 0), replied: Number(r?.replied ?? 0), bounced: Number(r?.bounced ?? 0), unsubscribed: unsubscribedBy.get(step.id) ?? 0,
    };
  });
}
