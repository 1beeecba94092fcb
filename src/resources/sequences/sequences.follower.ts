// What happens to an enrollment when something happens to what it sent, in the write that learns
// it (a follower of its events, platform/write/fanout.ts): a person's reply finishes it (when the
// sequence finishes on reply), an automatic one (out of office) pauses it until the return date it
// states, else for a week; a bounce
// finishes it; an unsubscribe finishes every open enrollment of the contact; a completed task of a
// call, LinkedIn or task step moves it on to the next step.
import type { Row } from '../../platform/resource/define.ts';
import { performAction } from '../../platform/resource/lifecycle.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { EventFollower, FollowedEvent, WriteContext } from '../../platform/write.ts';
import { enrollments } from './enrollments.resource.ts';
import { advance } from './scheduler.ts';
import { OPEN_ENROLLMENT } from './sequences.schemas.ts';
import { stepsOf } from './steps.store.ts';

/** How long an out-of-office reply that states no return date pauses an enrollment. */
export const OUT_OF_OFFICE_PAUSE = 7 * 86_400;

const openOf = (w: WriteContext) => selectIn(w.tx, 'sequence_enrollments', w.scope).selectAll().where('status', 'in', [...OPEN_ENROLLMENT]);

async function onMessage(w: WriteContext, event: FollowedEvent): Promise<void> {
  const message = event.object;
  if (message.record_type !== 'sequence' || typeof message.contact_id !== 'string') return;
  const e = await openOf(w).where('sequence_id', '=', String(message.record_id)).where('contact_id', '=', message.contact_id).executeTakeFirst() as Row | undefined;
  if (!e) return;
  if (event.type === 'message.bounced') return void (await performAction(enrollments, w, e, 'finish', { reason: 'bounced' }));
  if (message.is_auto_reply) {
    const back = typeof message.returns_at === 'number' && message.returns_at > w.now ? message.returns_at : w.now + OUT_OF_OFFICE_PAUSE;
    if (e.status !== 'paused') await performAction(enrollments, w, e, 'pause', { until: back });
    return;
  }
  const sequence = await selectIn(w.tx, 'sequences', w.scope).select('finish_on_reply').where('id', '=', String(e.sequence_id)).executeTakeFirst();
  if (sequence?.finish_on_reply) await performAction(enrollments, w, e, 'finish', { reason: 'replied' });
}

async function onUnsubscribed(w: WriteContext, event: FollowedEvent): Promise<void> {
  const contactId = event.object.contact_id;
  if (typeof contactId !== 'string') return;
  for (const e of await openOf(w).where('contact_id', '=', contactId).execute() as Row[]) await performAction(enrollments, w, e, 'finish', { reason: 'unsubscribed' });
}

async function onTaskCompleted(w: WriteContext, event: FollowedEvent): Promise<void> {
  const e = await openOf(w).where('task_id', '=', event.object.id).executeTakeFirst() as Row | undefined;
  if (!e) return;
  await advance(w, e, await stepsOf(w.tx, w.scope, String(e.sequence_id)), { task_id: null }, e.status === 'paused');
}

export const sequenceFollower: EventFollower = {
  types: ['reply.received', 'message.bounced', 'contact.unsubscribed', 'task.completed'],
  async follow(w, events) {
    for (const event of events) {
      if (event.type === 'contact.unsubscribed') await onUnsubscribed(w, event);
      else if (event.type === 'task.completed') await onTaskCompleted(w, event);
      else await onMessage(w, event);
    }
  },
};
