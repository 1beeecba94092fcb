// The operations of sequences beyond the kernel's CRUD, lifecycle and steps: enrolling contacts
// (per-item results), the enrollments of a sequence and of a contact, an enrollment's pause, resume
// and finish, the reorder of steps, the preview of a step for a contact and the per-step analytics.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { parseJson } from '../../db/sql.ts';
import { badRequest, conflict, notFound, validationError } from '../../platform/errors.ts';
import { publicUrlOf } from '../../platform/public/public-url.ts';
import type { Row } from '../../platform/resource/define.ts';
import { performAction } from '../../platform/resource/lifecycle.ts';
import { answerList } from '../../platform/resource/routes.ts';
import { presentChildren } from '../../platform/resource/children.ts';
import { getRow, presentOne } from '../../platform/resource/store.ts';
import { rowsByIds, selectIn } from '../../platform/resource/tenancy.ts';
import { Data, errorResponses, ListOf, Str, StringEnum } from '../../platform/schemas.ts';
import { unsubscribePath } from '../../platform/outbox/suppressions.ts';
import { e164Of } from '../../platform/phone.ts';
import { mutate, respond } from '../../platform/write.ts';
import { wholeList } from '../../platform/pagination.ts';
import { contacts } from '../contacts/contacts.resource.ts';
import { CONTACT_LIST_TYPES, lists } from '../lists/lists.resource.ts';
import { enrollments } from './enrollments.resource.ts';
import { enrol, listContacts } from './enrollments.store.ts';
import { renderStep, type RenderedStep } from './render-step.ts';
import { sequences } from './sequences.resource.ts';
import { EnrollBody } from './sequences.schemas.ts';
import { stepAnalytics } from './analytics.ts';
import { sequenceSteps } from './steps.children.ts';
import { renumber, stepsOf } from './steps.store.ts';
import { templateValues } from './template-values.ts';

const tags = ['Sequences'];
const enrollmentTags = ['Enrollments'];
/** A sequence takes contacts until it is terminated; those enrolled while it steps are woken for. */
const ENROLLABLE = ['drafted', 'scheduling', 'live', 'pausing', 'paused', 'resuming'];
const STEPPING = ['scheduling', 'live', 'resuming'];

const EnrollResult = Type.Object({
  contact_id: Type.String({ description: 'The contact asked for' }),
  status: StringEnum(['enrolled', 'already_enrolled'] as const, { description: '`enrolled` now, or `already_enrolled` (its open enrollment is answered)' }),
  enrollment_id: Type.String({ description: 'Its enrollment' }),
}, { description: 'What became of one contact' });
const EnrollAnswer = Type.Object({
  enrolled: Type.Integer({ description: 'Contacts enrolled now' }),
  results: Type.Array(EnrollResult, { description: 'One per contact, in the order asked (a list: its contacts, oldest first, at most 1,000 answered)' }),
}, { description: 'The outcome of an enrolment' });

const EnrollmentPatch = Type.Object({
  status: StringEnum(['paused', 'active', 'finished'] as const, { description: '`paused` holds it, `active` resumes a paused one, `finished` ends it (reason `manual`)', examples: ['paused'] }),
}, { additionalProperties: false, description: 'The move to make' });
const ACTION_OF = { paused: 'pause', active: 'resume', finished: 'finish' } as const;

const ReorderBody = Type.Object({
  step_ids: Type.Array(Str({ maxLength: 64, description: 'A step id' }), { minItems: 1, maxItems: 50, uniqueItems: true, description: 'Every step of the sequence, in their new order' }),
}, { additionalProperties: false, description: 'The new order of the steps' });

const PreviewBody = Type.Object({
  contact_id: Str({ maxLength: 64, description: 'The contact to render for', examples: ['con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  step_id: Str({ maxLength: 64, description: 'The step to render', examples: ['stp_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
}, { additionalProperties: false, description: 'What to preview' });
const Preview = Type.Object({
  step_id: Type.String({ description: 'The step' }),
  step_type: Type.String({ description: 'Its type' }),
  from: Type.Union([Type.String(), Type.Null()], { description: 'The mailbox it would go from (the enrollment\'s, else the first of the rotation); null for a text, which goes from the SMS provider\'s number' }),
  to: Type.Union([Type.String(), Type.Null()], { description: 'The contact\'s address; for a text, its phone number in E.164 form (null when it has none with a country code)' }),
  subject: Type.String({ description: 'The rendered subject (a same-thread step without one: `Re:` and the thread\'s first subject); empty for a text' }),
  text: Type.String({ description: 'The rendered text, with the mailbox\'s signature (e-mail); `{{ unsubscribe_url }}` shows a link that goes nowhere' }),
}, { description: 'A step as it would be sent to the contact' });

const StepAnalytics = Type.Object({
  step_id: Type.String({ description: 'The step' }),
  step_order: Type.Integer({ description: 'Its place' }),
  sent: Type.Integer({ description: 'Messages taken by a provider' }),
  delivered: Type.Integer({ description: 'Delivered (or opened, clicked or replied to, which prove it)' }),
  opened: Type.Integer({ description: 'Opened at least once' }),
  clicked: Type.Integer({ description: 'Clicked at least once' }),
  replied: Type.Integer({ description: 'Replied to by a person' }),
  bounced: Type.Integer({ description: 'Bounced' }),
  unsubscribed: Type.Integer({ description: 'Unsubscribed through its link' }),
}, { description: 'What became of a step\'s messages, exact' });

export async function sequenceRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.services;
  const params = sequences.schemas.params;

  app.post('/sequences/:id/enrollments', {
    schema: {
      tags, operationId: 'enrollInSequence', summary: 'Enrol contacts in a sequence',
      description: 'Enrols `contact_ids` (at most 1,000), every contact of `list_id`, or both, each due after the first step\'s wait: 201 when any was enrolled, else 200, with a result per contact. A contact already in the sequence keeps its enrollment (`already_enrolled`); an id that names no contact of yours is 404 `Contact not found` and enrols nobody. A sequence that is terminating or completed is 409.',
      params, body: EnrollBody, response: { 200: Data(EnrollAnswer, 'Nobody new was enrolled'), 201: Data(EnrollAnswer, 'Contacts were enrolled'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => respond(req, reply, async (w) => {
    const { contact_ids: ids, list_id: listId } = req.body;
    const sequence = await getRow(sequences, w.tx, w.dialect, w.scope, req.params.id);
    if (ids === undefined && listId === undefined) throw badRequest('Give contact_ids, list_id or both');
    if (!ENROLLABLE.includes(String(sequence.status))) throw conflict(`A sequence that is ${String(sequence.status)} cannot enrol contacts`);
    const wanted = [...(ids ?? [])];
    const found = new Set(ids ? (await rowsByIds(w.tx, 'contacts', w.scope, ids)).map((c) => String(c.id)) : []);
    // An id that names no contact of the tenant refuses the whole request, as any reference does.
    if (wanted.some((id) => !found.has(id))) throw notFound(contacts.notFound);
    if (listId !== undefined) {
      const list = await selectIn(w.tx, 'lists', w.scope).select('type').where('id', '=', listId).executeTakeFirst();
      if (!list) throw notFound(lists.notFound);
      if (!CONTACT_LIST_TYPES.includes(list.type)) throw badRequest(`List ${listId} is of type ${list.type}, not ${CONTACT_LIST_TYPES.join(' or ')}`);
      for (const id of await listContacts(w, listId)) {
        if (found.has(id)) continue;
        found.add(id);
        wanted.push(id);
      }
    }
    const steps = await stepsOf(w.tx, w.scope, sequence.id);
    const made = await enrol(w, sequence, wanted, steps[0]?.time_interval ?? 0, STEPPING.includes(String(sequence.status)));
    const results = wanted.slice(0, 1000).map((id) => {
      const e = made.get(id)!;
      return { contact_id: id, status: e.created ? 'enrolled' : 'already_enrolled', enrollment_id: e.id };
    });
    const enrolled = [...made.values()].filter((e) => e.created).length;
    return { status: enrolled > 0 ? 201 : 200, payload: { data: { enrolled, results } } };
  }));

  const EnrollmentQuery = enrollments.schemas.query;
  app.get('/sequences/:id/enrollments', {
    schema: {
      tags: enrollmentTags, operationId: 'listSequenceEnrollments', summary: 'List the enrollments of a sequence', description: 'Newest first, with an exact `total`; filters `status`, `contact_id`. Unknown sequence: 404.',
      params, querystring: EnrollmentQuery, response: { 200: ListOf(enrollments.schemas.record, 'A page of enrollments'), ...errorResponses(404) },
    },
  }, async (req, reply) => {
    const sequence = await getRow(sequences, database.db, database.dialect, req.scope, req.params.id);
    return answerList(enrollments, req, reply, { ...(req.query as Record<string, unknown>), sequence_id: sequence.id });
  });

  app.get('/contacts/:id/enrollments', {
    schema: {
      tags: enrollmentTags, operationId: 'listContactEnrollments', summary: 'List the enrollments of a contact', description: 'The contact\'s enrollments in every sequence, newest first, with an exact `total`; filters `status`, `sequence_id`. Unknown contact: 404 `Contact not found`.',
      params: contacts.schemas.params, querystring: EnrollmentQuery, response: { 200: ListOf(enrollments.schemas.record, 'A page of enrollments'), ...errorResponses(404) },
    },
  }, async (req, reply) => {
    const contact = await getRow(contacts, database.db, database.dialect, req.scope, (req.params as { id: string }).id);
    return answerList(enrollments, req, reply, { ...(req.query as Record<string, unknown>), contact_id: contact.id });
  });

  app.patch('/enrollments/:id', {
    schema: {
      tags: enrollmentTags, operationId: 'updateEnrollment', summary: 'Pause, resume or finish an enrollment',
      description: '`{"status": "paused"}` holds its next step, `"active"` resumes a paused one (its next step due now, or when it was due if later), `"finished"` ends it with reason `manual`. Records `enrollment.paused`, `enrollment.resumed` or `enrollment.finished`. A move its state does not allow is 409 naming both.',
      params: enrollments.schemas.params, body: EnrollmentPatch, response: { 200: Data(enrollments.schemas.record, 'The enrollment'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 200, async (w) => (await performAction(enrollments, w, req.params.id, ACTION_OF[req.body.status], {})).record));

  app.post('/sequences/:id/steps/reorder', {
    schema: {
      tags, operationId: 'reorderSequenceSteps', summary: 'Reorder the steps of a sequence',
      description: 'Gives the steps the order of `step_ids`, which must name every step of the sequence once: an id of no step of it is 404 `Step not found`, a step left out 422. Records `sequence.steps_reordered`; answers the steps in their new order.',
      params, body: ReorderBody, response: { 200: ListOf(sequenceSteps.schemas.record, 'The steps in order'), ...errorResponses(404, 409, 422) },
    },
  }, (req, reply) => respond(req, reply, async (w) => {
    const sequence = await getRow(sequences, w.tx, w.dialect, w.scope, req.params.id);
    if (!['drafted', 'live', 'paused'].includes(String(sequence.status))) throw conflict(`A sequence that is ${String(sequence.status)} cannot be changed`);
    const steps = await stepsOf(w.tx, w.scope, sequence.id);
    const given = req.body.step_ids;
    const known = new Set(steps.map((s) => s.id));
    if (given.some((id) => !known.has(id))) throw notFound('Step not found');
    if (given.length !== steps.length) {
      throw validationError([{ loc: ['body', 'step_ids'], msg: `must name each of the sequence's ${steps.length} steps once`, type: 'value_error.step_ids' }]);
    }
    await renumber(w, sequence.id, given);
    const rows = await selectIn(w.tx, 'sequence_steps', w.scope).selectAll().where('sequence_id', '=', sequence.id).orderBy('step_order').execute();
    const ordered = await presentChildren(sequenceSteps, w.tx, w.scope, rows as never);
    w.emit('sequence.steps_reordered', { ...(await presentOne(sequences, w.tx, w.scope, sequence)), step_ids: given });
    return { status: 200, payload: wholeList(ordered) };
  }));

  app.post('/sequences/:id/preview', {
    schema: {
      tags, operationId: 'previewSequenceStep', summary: 'Preview a step for a contact',
      description: 'Renders the step (or the A/B variant the contact\'s enrollment is given) exactly as it would be sent to the contact, with the mailbox it would go from, and a same-thread step without a subject answering the enrollment\'s first message (`Re: …`). Unknown sequence, step or contact: 404; a step that cannot be rendered for the contact: 422. Nothing is written.',
      params, body: PreviewBody, response: { 200: Data(Preview, 'The step as it would be sent'), ...errorResponses(404, 422) },
    },
  }, async (req) => {
    const db = database.db;
    const sequence = await getRow(sequences, db, database.dialect, req.scope, req.params.id);
    const step = (await stepsOf(db, req.scope, sequence.id)).find((s) => s.id === req.body.step_id);
    if (!step) throw notFound('Step not found');
    const contact = await getRow(contacts, db, database.dialect, req.scope, req.body.contact_id);
    const enrollment = await selectIn(db, 'sequence_enrollments', req.scope).selectAll().where('sequence_id', '=', sequence.id).where('contact_id', '=', contact.id).orderBy('id', 'desc').executeTakeFirst() as Row | undefined;
    const mailboxId = enrollment?.mailbox_id ?? parseJson<string[]>(sequence.mailbox_ids)[0];
    const mailbox = mailboxId ? await selectIn(db, 'mailboxes', req.scope).selectAll().where('id', '=', String(mailboxId)).executeTakeFirst() as Row | undefined : undefined;
    const company = contact.company_id ? (await rowsByIds(db, 'companies', req.scope, [String(contact.company_id)]))[0] as Row | undefined : undefined;
    const values = templateValues(contact, company, mailbox, publicUrlOf(unsubscribePath('preview')));
    const thread = enrollment && sequence.send_in_same_thread ? parseJson<string[]>(enrollment.thread_message_ids) : [];
    const first = thread[0] ? await selectIn(db, 'outbox_messages', req.scope).select('subject').where('message_id', '=', thread[0]).executeTakeFirst() : undefined;
    let rendered: RenderedStep;
    try {
      rendered = renderStep(step, enrollment?.id ?? contact.id, values, { signature: mailbox?.signature as string | null | undefined, firstSubject: first?.subject ?? undefined });
    } catch (error) {
      throw validationError([{ loc: ['body', 'contact_id'], msg: `Step ${step.step_order} cannot be rendered for this contact: ${(error as Error).message}`, type: 'value_error.template' }]);
    }
    const sms = step.step_type === 'SMS';
    return {
      data: {
        step_id: step.id, step_type: step.step_type, from: sms ? null : (mailbox?.email as string | undefined) ?? null,
        to: sms ? e164Of(String(contact.phone ?? '')) ?? null : (contact.work_email ?? contact.personal_email ?? null) as string | null, ...rendered,
      },
    };
  });

  app.get('/sequences/:id/analytics', {
    schema: {
      tags, operationId: 'sequenceAnalytics', summary: 'Analytics of a sequence by step',
      description: 'For each step in order: its messages sent, delivered, opened, clicked, replied to, bounced and unsubscribed from, counted exactly from the outbox and the suppressions. Unknown sequence: 404.',
      params, response: { 200: Data(Type.Object({ steps: Type.Array(StepAnalytics, { description: 'One per step, in order' }) }, { description: 'Per-step analytics' }), 'The analytics'), ...errorResponses(404) },
    },
  }, async (req) => {
    const sequence = await getRow(sequences, database.db, database.dialect, req.scope, req.params.id);
    return { data: { steps: await stepAnalytics(database.db, req.scope, sequence.id) } };
  });
}
