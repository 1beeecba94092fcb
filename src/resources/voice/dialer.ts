// The dialer of a running session: one job under the session's key (voice-kinds.ts), woken when a
// line frees (a call ended), when the agent becomes available, and when a contact waiting for its
// hours is due. Each run counts the session's calls not yet ended and fills the free lines: first
// with contacts due in the session's queue (dropped calls' contacts, contacts whose hours opened),
// then with the next contacts of the list after the session's cursor (by the contacts' list index:
// a run reads what it takes, never the list). A contact without a phone, or whose number is suppressed on
// calls, is skipped; one outside its calling hours (its own time zone, else the agent's; DST-correct,
// platform/time/windows.ts) waits in the queue until they open. Each call is written `queued` with
// the cursor's move in one write, and placed by its own job: a run that dies is run again and takes
// nothing twice (a contact is called once per pass and attempt: the calls' unique index). Nothing is
// dialed while a call is connected to the agent: the agent can take one call. The session completes
// when the list is exhausted, nothing waits in its queue and no call is left.
import { newId } from '../../platform/ids.ts';
import { suppressionsOf } from '../../platform/outbox/suppressions.ts';
import { e164Of } from '../../platform/phone.ts';
import type { Row } from '../../platform/resource/define.ts';
import { performAction } from '../../platform/resource/lifecycle.ts';
import { rowsByIds, selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import { nextAllowed } from '../../platform/time/windows.ts';
import { ianaZone } from '../../platform/time/zones.ts';
import { parseJson } from '../../db/sql.ts';
import type { WriteContext } from '../../platform/write.ts';
import { dialerSessions } from './sessions.resource.ts';
import { DEFAULT_WINDOW, LIVE_CALLS, queueContact, wakeDialer, weeklyOf, type CallingWindow } from './sessions.store.ts';
import { watchCall } from './call-updates.ts';
import { PLACE, type CallPayload } from './voice-kinds.ts';

/** Contacts read from the list at a time while filling lines: those lines, a few more, at most 50. */
const PAGE = 50;
const SLACK = 4;
const E164 = /^\+[1-9]\d{6,14}$/;

interface Candidate { contactId: string; queued: boolean }

/** One run of the session's dialer (see the top of this file). */
export async function dial(w: WriteContext, sessionId: string): Promise<void> {
  let read = selectIn(w.tx, 'dialer_sessions', w.scope).selectAll().where('id', '=', sessionId);
  // Two runs of one session (a retried job beside a woken one) take turns on its row.
  if (w.dialect === 'postgres') read = read.forUpdate();
  const session = await read.executeTakeFirst();
  if (!session || session.status !== 'running') return;
  const agent = await selectIn(w.tx, 'voice_agents', w.scope).selectAll().where('id', '=', session.agent_id).executeTakeFirst();
  const live = await selectIn(w.tx, 'calls', w.scope).select((eb) => eb.fn.countAll<number>().as('n'))
    .where('session_id', '=', sessionId).where('status', 'in', LIVE_CALLS).executeTakeFirstOrThrow();
  let free = agent?.status === 'available' && !agent.current_call_id ? session.parallel_lines - Number(live.n) : 0;
  const window = parseJson<CallingWindow>(session.calling_window) ?? DEFAULT_WINDOW;
  const weekly = weeklyOf(window);
  const member = agent ? await selectIn(w.tx, 'members', w.scope).select('timezone').where('id', '=', agent.member_id).executeTakeFirst() : undefined;
  const fallbackZone = ianaZone(window.timezone) ?? ianaZone(member?.timezone) ?? 'UTC';
  const skipped = parseJson<Record<string, number>>(session.skipped) ?? {};
  let cursor = session.cursor;
  let exhausted = Boolean(session.exhausted);
  let placed = 0;
  let from: string | undefined;

  while (free > 0) {
    const candidates: Candidate[] = [];
    const due = await selectIn(w.tx, 'dialer_queue', w.scope).select(['id', 'contact_id']).where('session_id', '=', sessionId).where('due_at', '<=', w.now)
      .orderBy('due_at').orderBy('id').limit(free).execute();
    for (const q of due) candidates.push({ contactId: q.contact_id, queued: true });
    if (due.length > 0) await w.tx.deleteFrom('dialer_queue').where('org_id', '=', w.scope.orgId).where('mode', '=', w.scope.mode).where('id', 'in', due.map((q) => q.id)).execute();
    const contacts = new Map((await rowsByIds(w.tx, 'contacts', w.scope, candidates.map((c) => c.contactId))).map((c) => [c.id, c]));
    if (candidates.length < free && !exhausted) {
      let page = selectIn(w.tx, 'contacts', w.scope).selectAll().where('list_id', '=', session.list_id);
      if (cursor) page = page.where('id', '>', cursor);
      // As many as the lines to fill, a few more for those skipped: a run reads what it takes.
      const take = Math.min(PAGE, free - candidates.length + SLACK);
      const read = await page.orderBy('id').limit(take).execute();
      if (read.length < take) exhausted = true;
      for (const contact of read) {
        contacts.set(contact.id, contact);
        candidates.push({ contactId: contact.id, queued: false });
      }
    }
    if (candidates.length === 0) break;
    // Phones are stored in E.164 by every write since numbers were normalized: only older ones are parsed.
    const numbers = new Map(candidates.map((c) => {
      const phone = contacts.get(c.contactId)?.phone ?? '';
      return [c.contactId, E164.test(phone) ? phone : e164Of(phone)];
    }));
    const suppressed = await suppressionsOf(w.tx, w.scope, 'phone', [...numbers.values()].filter((n) => n !== undefined));
    for (const candidate of candidates) {
      // Past the free lines, the rest of a page is left for the next run: the cursor stops before it.
      if (free === 0) {
        if (!candidate.queued) exhausted = false;
        break;
      }
      if (!candidate.queued) cursor = candidate.contactId;
      const contact = contacts.get(candidate.contactId);
      const to = numbers.get(candidate.contactId);
      const skip = !contact ? 'deleted' : !to ? 'no_phone' : suppressed.has(to) ? 'suppressed' : undefined;
      if (skip) {
        skipped[skip] = (skipped[skip] ?? 0) + 1;
        continue;
      }
      const zone = ianaZone(contact!.timezone) ?? fallbackZone;
      const opens = nextAllowed(w.now, zone, weekly);
      if (opens !== w.now) {
        if (!candidate.queued) skipped.outside_window = (skipped.outside_window ?? 0) + 1;
        // A window that never opens (none within a year) cannot happen with daily hours; wait a day.
        await queueContact(w, sessionId, candidate.contactId, 'window', opens ?? w.now + 86_400);
        continue;
      }
      from ??= (await selectIn(w.tx, 'voice_numbers', w.scope).select('phone_number').where('id', '=', session.number_id).executeTakeFirst())?.phone_number ?? '';
      await placeCall(w, session as unknown as Row, candidate, to!, from);
      free--;
      placed++;
    }
  }
  await updateIn(w.tx, 'dialer_sessions', w.scope).set({ cursor, exhausted: exhausted ? 1 : 0, skipped: JSON.stringify(skipped), updated_at: w.now }).where('id', '=', sessionId).execute();
  if (placed > 0 || Number(live.n) > 0 || !exhausted) return;
  const waiting = await selectIn(w.tx, 'dialer_queue', w.scope).select((eb) => eb.fn.min('due_at').as('next')).where('session_id', '=', sessionId).executeTakeFirst();
  if (waiting?.next !== null && waiting?.next !== undefined) return wakeDialer(w, sessionId, Number(waiting.next));
  await performAction(dialerSessions, w, { ...session, cursor, exhausted: 1 } as unknown as Row, 'complete');
}

/** Writes one call `queued` and enqueues its placing. */
async function placeCall(w: WriteContext, session: Row, candidate: Candidate, to: string, from: string): Promise<void> {
  let attempt = 1;
  if (candidate.queued) {
    const last = await selectIn(w.tx, 'calls', w.scope).select((eb) => eb.fn.max('attempt').as('n'))
      .where('session_id', '=', session.id).where('pass', '=', Number(session.pass)).where('contact_id', '=', candidate.contactId).executeTakeFirst();
    attempt = Number(last?.n ?? 0) + 1;
  }
  const id = newId('call');
  await w.tx.insertInto('calls').values({
    org_id: w.scope.orgId, mode: w.scope.mode, id, session_id: session.id, contact_id: candidate.contactId, agent_id: String(session.agent_id), number_id: String(session.number_id),
    direction: 'outbound', from_number: from, to_number: to, status: 'queued', provider: 'local', pass: Number(session.pass), attempt,
    answered_by: null, last_update_at: w.now, created_at: w.now, updated_at: w.now,
  }).execute();
  w.enqueue(PLACE, { call_id: id } satisfies CallPayload);
  // Watched from the start: a call whose placing never happens is failed, not left queued.
  watchCall(w, id, 'queued');
}
