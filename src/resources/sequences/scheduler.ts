// The scheduler of a live sequence: one job under the sequence's key (sweep-kind.ts), woken when an
// enrollment falls due. Each run takes the enrollments due now, by an index on `due_at` (its cost
// grows with what is due, never with what is enrolled), up to a batch, and for each rechecks what
// may have changed since it was scheduled: the enrollment's state, the sending window in the
// contact's or the sequence's time zone (platform/time/windows.ts, DST-correct) and the room its
// mailbox has. A step that may not go now is due again at the next moment it may. One that may is
// queued in the outbox under a key made of the enrollment and the step (platform/outbox/send.ts):
// the message, its Message-ID and the enrollment's move commit together, so a run that dies is run
// again and sends nothing twice. The outbox's send job then hands it to the mailbox's provider (an
// SMS step's text, to the contact's phone, to the SMS provider).
// A campaign's sequence pays one credit per message it queues, debited in the run's write; with the
// balance spent, its steps wait (and are asked again every few minutes) rather than go unpaid.
import type { Mode } from '../../db/schema.ts';
import { parseJson } from '../../db/sql.ts';
import { defineJobKind } from '../../platform/jobs/kinds.ts';
import { messageIdFor, queueEmail, queueSms, readSendsAhead, textIdFor, willSend, type Send, type SendsAhead } from '../../platform/outbox/send.ts';
import { listUnsubscribeHeaders, unsubscribeLink } from '../../platform/outbox/suppressions.ts';
import { e164Of, needsRegion } from '../../platform/phone.ts';
import type { Row } from '../../platform/resource/define.ts';
import { performAction } from '../../platform/resource/lifecycle.ts';
import { createRecord, findRow } from '../../platform/resource/store.ts';
import { rowsByIds, selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import { weeklyOf, type Schedule } from '../../platform/time/schedule.ts';
import { nextAllowed, type WeeklyIntervals } from '../../platform/time/windows.ts';
import { ianaZone } from '../../platform/time/zones.ts';
import { readCounter, type WriteContext } from '../../platform/write.ts';
import { allowanceOf, sentBy } from '../mailboxes/limits.ts';
import { tasks } from '../tasks/tasks.resource.ts';
import { debitCredits } from '../usage/usage.store.ts';
import { enrollments } from './enrollments.resource.ts';
import { enrol, listContacts, wakeSweep } from './enrollments.store.ts';
import { sequences } from './sequences.resource.ts';
import { renderStep, type RenderedStep } from './render-step.ts';
import { OPEN_ENROLLMENT, TASK_STEPS } from './sequences.schemas.ts';
import { stepsOf, type Step } from './steps.store.ts';
import { SWEEP, type SweepPayload } from './sweep-kind.ts';
import { templateValues } from './template-values.ts';

/** Enrollments stepped by one run: a run that finds more is woken again at once. */
export const BATCH = 200;
/** How often a sequence waiting for new contacts looks for them. */
const NEW_CONTACTS_EVERY = 60;
/** When a mailbox at its limit is asked again, at the latest. */
const ROOM_RETRY = 300;

/** What one run knows of the sequence: its steps, the enrollments' contacts and companies, its mailboxes and their room. */
interface Run {
  w: WriteContext;
  sequence: Row;
  steps: Step[];
  weekly: WeeklyIntervals;
  zone: string;
  contacts: Map<string, Row>;
  companies: Map<string, Row>;
  mailboxes: Row[];
  room: Map<string, number>;
  /** The next mailbox of the rotation to try. */
  turn: number;
  /** The subjects of the first messages of the due enrollments' threads, by Message-ID. */
  firstSubjects: Map<string, string>;
  /** What the run's sends read ahead. */
  ahead: SendsAhead;
  /** A campaign's sequence: the credits it may spend in this run, and those spent. */
  credits?: { balance: number; spent: number };
}

/** Mailboxes with their room now: their allowance this hour, less what they have queued and not yet sent. */
async function mailboxRoom(w: WriteContext, ids: string[]): Promise<{ mailboxes: Row[]; room: Map<string, number> }> {
  if (ids.length === 0) return { mailboxes: [], room: new Map() };
  let read = selectIn(w.tx, 'mailboxes', w.scope).selectAll().where('id', 'in', ids);
  // Two schedulers sharing a mailbox take turns: its room is read and used under its row's lock.
  if (w.dialect === 'postgres') read = read.forUpdate();
  const rows = await read.execute() as Row[];
  const byId = new Map(rows.map((r) => [r.id, r]));
  const mailboxes = ids.map((id) => byId.get(id)).filter((m) => m !== undefined);
  const sent = await sentBy(w.tx, w.scope, ids, w.now);
  const queued = await selectIn(w.tx, 'outbox_messages', w.scope).select(['mailbox_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('mailbox_id', 'in', ids).where('status', '=', 'queued').groupBy('mailbox_id').execute();
  const waiting = new Map(queued.map((q) => [q.mailbox_id, Number(q.n)]));
  const room = new Map(mailboxes.map((m) => [m.id, allowanceOf(m as never, sent.get(m.id)!, w.now).remaining_this_hour - (waiting.get(m.id) ?? 0)]));
  return { mailboxes, room };
}

/** The enrollment's mailbox (kept from its first e-mail), else the next of the rotation with room. */
function mailboxFor(run: Run, e: Row): Row | undefined {
  const kept = run.mailboxes.find((m) => m.id === e.mailbox_id);
  if (kept) return (run.room.get(kept.id) ?? 0) > 0 ? kept : undefined;
  for (let i = 0; i < run.mailboxes.length; i++) {
    const m = run.mailboxes[(run.turn + i) % run.mailboxes.length];
    if ((run.room.get(m.id) ?? 0) > 0) {
      run.turn = (run.turn + i + 1) % run.mailboxes.length;
      return m;
    }
  }
  return undefined;
}

/**
 * An enrollment's move, written at the end of the write with the other moves of the run (on
 * PostgreSQL in its one round trip): nothing in the write reads the enrollment back, and a new due
 * time wakes the scheduler for it.
 */
function setEnrollment(w: WriteContext, id: string, set: Record<string, unknown>): void {
  w.later(updateIn(w.tx, 'sequence_enrollments', w.scope).set({ ...set, updated_at: w.now } as never).where('id', '=', id));
}

/**
 * Moves the enrollment past its current step: due for the next one, or finished when that was the
 * last. One `held` (paused by hand) stays paused, its next step due once it is resumed.
 */
export async function advance(w: WriteContext, e: Row, steps: readonly Step[], set: Record<string, unknown> = {}, held = false): Promise<void> {
  const next = Number(e.step_index) + 1;
  if (next >= steps.length) {
    setEnrollment(w, e.id, { ...set, step_index: next });
    await performAction(enrollments, w, { ...e, ...set, step_index: next } as Row, 'finish', { reason: 'completed' });
    return;
  }
  if (held) return setEnrollment(w, e.id, { ...set, step_index: next, task_id: null });
  const due = w.now + steps[next].time_interval;
  setEnrollment(w, e.id, { ...set, step_index: next, status: 'active', due_at: due, task_id: null });
  wakeSweep(w, String(e.sequence_id), due);
}

/** The enrollment waits for its window or for room: pending, due again at `at`. */
function waitUntil(run: Run, e: Row, at: number): void {
  setEnrollment(run.w, e.id, { status: 'pending', due_at: at });
  wakeSweep(run.w, run.sequence.id, at);
}

const fail = (w: WriteContext, e: Row, error: string) => performAction(enrollments, w, e, 'fail', { error });

/** A step done by a person: a task for the mailbox's owner, the enrollment waiting for it. */
async function createStepTask(run: Run, e: Row, step: Step, contact: Row): Promise<void> {
  const owner = run.mailboxes[0]?.owner_id ?? null;
  const type = TASK_STEPS[step.step_type] ?? 'email';
  const name = String(contact.name ?? contact.work_email ?? contact.id);
  const title = step.subject ? `${run.sequence.name}: ${step.subject}` : `${run.sequence.name}, step ${step.step_order}: ${type === 'email' ? 'write to' : type === 'call' ? 'call' : type === 'linkedin' ? 'reach on LinkedIn' : 'follow up with'} ${name}`;
  const task = await createRecord(tasks, run.w, {
    title: title.slice(0, 500), type, description: step.body, due_at: run.w.now, assignee: owner, associations: { contact_ids: [contact.id] },
  });
  setEnrollment(run.w, e.id, { task_id: task.id, status: 'active', due_at: null });
}

/** The key of the enrollment's step's message: what makes it one send, however often it is asked. */
const sendKeyOf = (e: Row, step: Step) => `sequence:${e.id}:${step.id}`;

/** The contact's address for a step that sends: an e-mail address, or a phone number in E.164 form. */
function addressOf(step: Step, contact: Row): string | undefined {
  if (step.step_type === 'SMS') return e164Of(String(contact.phone ?? '')) ?? undefined;
  return ((contact.work_email ?? contact.personal_email) as string | null) ?? undefined;
}

/** What the run's sends would each read before queuing (their keys' messages, their recipients' suppressions), read at once. */
function readAheadFor(w: WriteContext, steps: Step[], due: Row[], contacts: Map<string, Row>) {
  const sends: Send[] = [];
  for (const e of due) {
    const step = steps[Number(e.step_index)];
    const contact = contacts.get(String(e.contact_id));
    if (!step || !contact || (step.step_type !== 'EMAIL' && step.step_type !== 'SMS')) continue;
    const address = addressOf(step, contact);
    if (address) sends.push({ sendKey: sendKeyOf(e, step), channel: step.step_type === 'SMS' ? 'sms' : 'email', to: [address] });
  }
  return readSendsAhead(w, sends);
}

/** A campaign's sends wait once the credits its run could spend are spent. */
const unpaid = (run: Run) => run.credits !== undefined && run.credits.spent >= run.credits.balance;

/**
 * The unsubscribe URL of a message about to be queued, made only when it will be sent: a message
 * queued before (a step run again) keeps its own, and one to a suppressed recipient needs none.
 */
function linkFor(run: Run, send: Send, contact: Row, messageId: string): string | null {
  if (!willSend(run.ahead, send)) return null;
  return unsubscribeLink(run.w, { channel: send.channel, address: send.to[0], contact_id: contact.id, message_id: messageId }).url;
}

/** Sends the enrollment's e-mail step, or says why it waits (false). */
async function sendEmail(run: Run, e: Row, step: Step, contact: Row): Promise<void> {
  const { w, sequence } = run;
  const address = addressOf(step, contact);
  if (!address) return void (await fail(w, e, 'The contact has no e-mail address'));
  const mailbox = mailboxFor(run, e);
  if (!mailbox || unpaid(run)) return waitUntil(run, e, w.now + ROOM_RETRY);
  const sendKey = sendKeyOf(e, step);
  const link = linkFor(run, { sendKey, channel: 'email', to: [address] }, contact, messageIdFor(w, sendKey, String(mailbox.email)));
  const thread = parseJson<string[]>(e.thread_message_ids);
  const sameThread = Boolean(sequence.send_in_same_thread) && thread.length > 0;
  let rendered: RenderedStep;
  try {
    rendered = renderStep(step, e.id, templateValues(contact, run.companies.get(String(contact.company_id)), mailbox, link), {
      signature: mailbox.signature as string | null, firstSubject: sameThread ? run.firstSubjects.get(thread[0]) : undefined,
    });
  } catch (error) {
    return void (await fail(w, e, `Step ${step.step_order} could not be rendered: ${(error as Error).message}`));
  }
  const { subject, text } = rendered;
  if (!subject) return void (await fail(w, e, `Step ${step.step_order} has no subject`));
  const queued = await queueEmail(w, sendKey, {
    from: String(mailbox.email), fromName: mailbox.display_name as string | null, to: [address], subject, text,
    headers: link ? listUnsubscribeHeaders(link) : {}, inReplyTo: sameThread ? thread.at(-1) : null, references: sameThread ? thread : [],
    mailboxId: mailbox.id, contactId: contact.id, record: { type: 'sequence', id: sequence.id }, stepId: step.id,
  }, { ahead: run.ahead });
  if (queued.status === 'suppressed') return void (await performAction(enrollments, w, e, 'finish', { reason: 'suppressed' }));
  run.room.set(mailbox.id, (run.room.get(mailbox.id) ?? 0) - 1);
  if (run.credits && queued.created) run.credits.spent += 1;
  await advance(w, e, run.steps, { mailbox_id: mailbox.id, thread_message_ids: JSON.stringify([...thread, queued.message_id]), last_sent_at: w.now });
}

/** Sends the enrollment's SMS step to the contact's phone, or says why it waits; a contact without a routable number fails. */
async function sendSms(run: Run, e: Row, step: Step, contact: Row): Promise<void> {
  const { w, sequence } = run;
  const phone = (contact.phone as string | null)?.trim();
  if (!phone) return void (await fail(w, e, 'The contact has no phone number'));
  // Numbers are stored in E.164 since contacts normalize them; one stored before may be neither.
  const to = e164Of(phone);
  if (!to) {
    const why = needsRegion(phone) ? 'has no country code: write it in international form (+44 20 7946 0000)' : 'is not a valid phone number';
    return void (await fail(w, e, `The contact's phone number ${phone} ${why}`));
  }
  if (unpaid(run)) return waitUntil(run, e, w.now + ROOM_RETRY);
  const sendKey = sendKeyOf(e, step);
  const link = linkFor(run, { sendKey, channel: 'sms', to: [to] }, contact, textIdFor(w, sendKey));
  const sender = run.mailboxes.find((m) => m.id === e.mailbox_id) ?? run.mailboxes[0];
  let text: string;
  try {
    text = renderStep(step, e.id, templateValues(contact, run.companies.get(String(contact.company_id)), sender, link)).text;
  } catch (error) {
    return void (await fail(w, e, `Step ${step.step_order} could not be rendered: ${(error as Error).message}`));
  }
  const queued = await queueSms(w, sendKey, { to, text, contactId: contact.id, record: { type: 'sequence', id: sequence.id }, stepId: step.id }, { ahead: run.ahead });
  if (queued.status === 'suppressed') return void (await performAction(enrollments, w, e, 'finish', { reason: 'suppressed' }));
  if (run.credits && queued.created) run.credits.spent += 1;
  await advance(w, e, run.steps, { last_sent_at: w.now });
}

/** Steps one due enrollment. */
async function stepOne(run: Run, e: Row): Promise<void> {
  const { w } = run;
  if (e.status === 'paused') return void (await performAction(enrollments, w, e, 'resume'));
  const step = run.steps[Number(e.step_index)];
  if (!step) return void (await performAction(enrollments, w, e, 'finish', { reason: 'completed' }));
  const contact = run.contacts.get(String(e.contact_id));
  if (!contact) return void (await fail(w, e, 'The contact was deleted'));
  const zone = (run.sequence.use_contact_timezone ? ianaZone(contact.timezone) : undefined) ?? run.zone;
  const at = nextAllowed(w.now, zone, run.weekly);
  if (at === undefined) return void (await fail(w, e, 'The sequence\'s schedule has no sending window'));
  if (at > w.now) return waitUntil(run, e, at);
  if (TASK_STEPS[step.step_type] || step.input_type === 'ON_DEMAND') return createStepTask(run, e, step, contact);
  if (step.step_type === 'SMS') return sendSms(run, e, step, contact);
  await sendEmail(run, e, step, contact);
}

/** Debits a campaign's messages, charged to whoever launched it (an agency's key acting for its client, say). */
async function payForSends(w: WriteContext, sequence: Row, n: number): Promise<void> {
  const campaignId = String(sequence.campaign_id);
  const launch = await selectIn(w.tx, 'events', w.scope).select(['actor_key_id', 'actor_org_id'])
    .where('object_id', '=', campaignId).where('type', '=', 'campaign.launched').executeTakeFirst();
  const launcher = launch?.actor_key_id && launch.actor_org_id ? { keyId: launch.actor_key_id, orgId: launch.actor_org_id } : null;
  await debitCredits(w, n, 'campaign.send', campaignId, `Campaign "${String(sequence.name)}": ${n} message${n === 1 ? '' : 's'} sent`, launcher);
}

/** Enrolls the list's contacts added since the sequence was run that were never in it. */
async function enrolNewContacts(w: WriteContext, sequence: Row, steps: Step[]): Promise<void> {
  const candidates = await listContacts(w, String(sequence.associated_list_id), Number(sequence.launched_at ?? 0));
  if (candidates.length === 0) return;
  const ever = new Set((await selectIn(w.tx, 'sequence_enrollments', w.scope).select('contact_id').where('sequence_id', '=', sequence.id).where('contact_id', 'in', candidates).execute()).map((r) => r.contact_id));
  const fresh = candidates.filter((id) => !ever.has(id));
  if (fresh.length > 0) await enrol(w, sequence, fresh, steps[0]?.time_interval ?? 0, true);
}

/** One run of a sequence's scheduler (see the top of this file). */
export async function sweep(w: WriteContext, sequenceId: string): Promise<void> {
  const sequence = await findRow(sequences, w.tx, w.dialect, w.scope, sequenceId);
  // Paused, terminated or deleted since it was woken: its work stops (resuming wakes it again).
  if (!sequence || sequence.status !== 'live') return;
  const steps = await stepsOf(w.tx, w.scope, sequenceId);
  if (sequence.wait_for_new_contacts && sequence.associated_list_id) await enrolNewContacts(w, sequence, steps);
  const due = await selectIn(w.tx, 'sequence_enrollments', w.scope).selectAll()
    .where('sequence_id', '=', sequenceId).where('due_at', '<=', w.now).where('status', 'in', ['pending', 'active', 'paused'])
    .orderBy('due_at').orderBy('id').limit(BATCH).execute() as Row[];
  if (due.length > 0) {
    const contactRows = await rowsByIds(w.tx, 'contacts', w.scope, [...new Set(due.map((e) => String(e.contact_id)))]) as Row[];
    const contacts = new Map(contactRows.map((c) => [c.id, c]));
    const companyIds = [...new Set(contactRows.map((c) => c.company_id).filter((id): id is string => typeof id === 'string'))];
    const companyRows = companyIds.length > 0 ? await rowsByIds(w.tx, 'companies', w.scope, companyIds) as Row[] : [];
    const schedule = parseJson<Schedule>(sequence.schedule);
    const { mailboxes, room } = await mailboxRoom(w, parseJson<string[]>(sequence.mailbox_ids));
    const run: Run = {
      w, sequence, steps, weekly: weeklyOf(schedule), zone: schedule.timezone, mailboxes, room, turn: 0, firstSubjects: await firstSubjects(w, sequence, due),
      ahead: await readAheadFor(w, steps, due, contacts),
      contacts, companies: new Map(companyRows.map((c) => [c.id, c])),
      credits: sequence.campaign_id ? { balance: await readCounter(w.tx, w.scope, 'credits'), spent: 0 } : undefined,
    };
    for (const e of due) await stepOne(run, e);
    if (run.credits && run.credits.spent > 0) await payForSends(w, sequence, run.credits.spent);
  }
  await wakeNext(w, sequence, due, due.length === BATCH);
}

/** The subjects of the first messages of the enrollments' threads (a same-thread step without a subject answers it), in one read. */
async function firstSubjects(w: WriteContext, sequence: Row, due: Row[]): Promise<Map<string, string>> {
  if (!sequence.send_in_same_thread) return new Map();
  const firsts = [...new Set(due.map((e) => parseJson<string[]>(e.thread_message_ids)[0]).filter((id) => id !== undefined))];
  if (firsts.length === 0) return new Map();
  const rows = await selectIn(w.tx, 'outbox_messages', w.scope).select(['message_id', 'subject']).where('message_id', 'in', firsts).execute();
  return new Map(rows.filter((r) => r.message_id && r.subject).map((r) => [r.message_id!, r.subject!]));
}

/**
 * Wakes the scheduler for the next enrollment due, or completes the sequence when none is left open.
 * The run's own enrollments are left out of the read of the next due: their moves are written at
 * the write's end, and each new due time of theirs woke the scheduler already.
 */
async function wakeNext(w: WriteContext, sequence: Row, stepped: Row[], more: boolean): Promise<void> {
  // Both reads stop at their first row, by an index (the due one, then the states'): neither grows with what is enrolled.
  const openOf = () => selectIn(w.tx, 'sequence_enrollments', w.scope).where('sequence_id', '=', sequence.id).where('status', 'in', [...OPEN_ENROLLMENT]);
  let nextDue = openOf().select('due_at').where('due_at', 'is not', null);
  if (stepped.length > 0) nextDue = nextDue.where('id', 'not in', stepped.map((e) => e.id));
  const first = await nextDue.orderBy('due_at').limit(1).executeTakeFirst();
  const next = first ? Number(first.due_at) : null;
  const waits = Boolean(sequence.wait_for_new_contacts);
  if (more) wakeSweep(w, sequence.id, w.now);
  else if (next !== null) wakeSweep(w, sequence.id, waits ? Math.min(next, w.now + NEW_CONTACTS_EVERY) : Math.max(next, w.now));
  else if (waits) wakeSweep(w, sequence.id, w.now + NEW_CONTACTS_EVERY);
  if (next === null && !waits && !(await openOf().select('id').limit(1).executeTakeFirst())) await performAction(sequences, w, sequence, 'complete');
}

export const sequenceSweep = defineJobKind<SweepPayload>({
  ...SWEEP,
  async run({ sequence_id: id }, { write, job }) {
    await write({ orgId: job.orgId, mode: job.mode as Mode }, (w) => sweep(w, id));
  },
});
