// What an agent records of a call beyond its kernel reads: the disposition (which may suppress the
// number, create a follow-up task and finish the contact's sequence enrollments) and the transcript.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError, conflict, notFound } from '../../platform/errors.ts';
import { suppress } from '../../platform/outbox/suppressions.ts';
import type { Row } from '../../platform/resource/define.ts';
import { performAction } from '../../platform/resource/lifecycle.ts';
import { createRecord, presentOne } from '../../platform/resource/store.ts';
import { selectIn, updateIn } from '../../platform/resource/tenancy.ts';
import { Data, errorResponses, Str, StringEnum } from '../../platform/schemas.ts';
import { mutate, type WriteContext } from '../../platform/write.ts';
import { enrollments } from '../sequences/enrollments.resource.ts';
import { OPEN_ENROLLMENT } from '../sequences/sequences.schemas.ts';
import { tasks } from '../tasks/tasks.resource.ts';
import { calls, DISPOSITIONS } from './calls.resource.ts';

const DispositionBody = Type.Object({
  disposition: StringEnum(DISPOSITIONS, { description: `What became of the call: ${DISPOSITIONS.map((d) => `\`${d}\``).join(', ')}. \`do_not_call\` suppresses the number on calls`, examples: ['meeting_booked'] }),
  notes: Type.Optional(Str({ maxLength: 10_000, description: 'The agent\'s notes', examples: ['Wants a demo next week'] })),
  follow_up: Type.Optional(Type.Object({
    title: Type.Optional(Str({ minLength: 1, maxLength: 500, description: 'The task\'s title; `Call back <contact>` when omitted', examples: ['Send the pricing deck'] })),
    due_at: Type.Integer({ minimum: 0, maximum: 1e11, description: 'When it is due, unix seconds', examples: [1767225600] }),
  }, { additionalProperties: false, description: 'A task for the agent about the contact, created with the disposition' })),
  finish_enrollment: Type.Optional(Type.Boolean({ description: 'Finish the contact\'s open sequence enrollments (reason `dispositioned`); true for `do_not_call` and `wrong_number` unless false', examples: [true] })),
}, { additionalProperties: false, title: 'CallDisposition' });

const TranscriptBody = Type.Object({
  text: Str({ minLength: 1, maxLength: 500_000, description: 'The transcript, as text', examples: ['Agent: Hi Ada, … Ada: Sounds good.'] }),
}, { additionalProperties: false, title: 'CallTranscriptInput' });

const GradeBody = Type.Object({
  rubric_id: Str({ maxLength: 64, description: 'The rubric to grade the call against', examples: ['rub_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
}, { additionalProperties: false, title: 'CallGradeInput' });
const Grade = Type.Object({
  call_id: Type.String({ examples: ['call_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  rubric_id: Type.String({ examples: ['rub_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  score: Type.Number({ minimum: 0, maximum: 100, description: 'The weighted score, 0 to 100', examples: [72.5] }),
}, { title: 'CallGrade' });

const Transcript = Type.Object({
  call_id: Type.String({ examples: ['call_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'] }),
  text: Type.String({ description: 'The transcript', examples: ['Agent: Hi Ada, …'] }),
}, { title: 'CallTranscript' });

/** The call, or 404. */
async function callOf(w: WriteContext, id: string): Promise<Row> {
  const row = await selectIn(w.tx, 'calls', w.scope).selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(calls.notFound);
  return row as Row;
}

export async function callRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post('/calls/:id/disposition', {
    config: { messages: { enum: { disposition: `Invalid disposition: must be one of ${DISPOSITIONS.join(', ')}` } } },
    schema: {
      tags: ['Calls'], operationId: 'dispositionCall', summary: 'Record a call\'s disposition',
      description: 'Records what became of an answered or ended call (a call still `queued` or `ringing` is 409), with `call.dispositioned`; a later disposition replaces it. `do_not_call` suppresses the number on calls (no session dials it again); `follow_up` creates a task for the agent\'s member about the contact; `finish_enrollment` finishes the contact\'s open sequence enrollments (by default for `do_not_call` and `wrong_number`).',
      params: calls.schemas.params, body: DispositionBody,
      response: { 200: Data(calls.schemas.record, 'The call with its disposition'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 200, async (w) => {
    const { disposition, notes, follow_up: followUp } = req.body;
    const row = await callOf(w, req.params.id);
    if (row.status === 'queued' || row.status === 'ringing') throw conflict(`A call that is ${row.status} cannot be dispositioned`);
    const set = { disposition, notes: notes ?? null, dispositioned_at: w.now, updated_at: w.now };
    await updateIn(w.tx, 'calls', w.scope).set(set).where('id', '=', row.id).execute();
    const contactId = row.contact_id ? String(row.contact_id) : null;
    if (disposition === 'do_not_call') await suppress(w, { channel: 'phone', address: String(row.to_number), reason: 'manual', contact_id: contactId, detail: `Disposition do_not_call of ${row.id}` });
    if (followUp && contactId) {
      const agent = await selectIn(w.tx, 'voice_agents', w.scope).select('member_id').where('id', '=', String(row.agent_id ?? '')).executeTakeFirst();
      const contact = await selectIn(w.tx, 'contacts', w.scope).select(['name', 'phone']).where('id', '=', contactId).executeTakeFirst();
      await createRecord(tasks, w, {
        title: followUp.title ?? `Call back ${contact?.name ?? contact?.phone ?? row.to_number}`, type: 'call', due_at: followUp.due_at,
        description: notes ?? null, assignee: agent?.member_id ?? null, associations: { contact_ids: [contactId] },
      });
    }
    if ((req.body.finish_enrollment ?? (disposition === 'do_not_call' || disposition === 'wrong_number')) && contactId) {
      const open = await selectIn(w.tx, 'sequence_enrollments', w.scope).selectAll().where('contact_id', '=', contactId).where('status', 'in', OPEN_ENROLLMENT).execute();
      for (const e of open) await performAction(enrollments, w, e as Row, 'finish', { reason: 'dispositioned' });
    }
    const record = await presentOne(calls, w.tx, w.scope, { ...row, ...set });
    w.emit('call.dispositioned', record);
    return record;
  }));

  app.post('/calls/:id/grade', {
    schema: {
      tags: ['Calls'], operationId: 'gradeCall', summary: 'Grade a call against a rubric',
      description: 'Would grade the call\'s transcript against the rubric\'s weighted criteria with a language model. The service has no language-model provider yet, so for a call and rubric that exist (404 otherwise) and a call with a transcript (409 without one) this is always 503 `provider_not_configured`.',
      params: calls.schemas.params, body: GradeBody, response: { 200: Data(Grade, 'The grade'), ...errorResponses(404, 409, 503) },
    },
  }, async (req) => {
    const { db } = req.server.services.database;
    const call = await selectIn(db, 'calls', req.scope).select(['id', 'transcript']).where('id', '=', req.params.id).executeTakeFirst();
    if (!call) throw notFound(calls.notFound);
    const rubric = await selectIn(db, 'voice_rubrics', req.scope).select('id').where('id', '=', req.body.rubric_id).executeTakeFirst();
    if (!rubric) throw notFound('Rubric not found');
    if (call.transcript === null) throw conflict(`Call ${call.id} has no transcript to grade: store one with PUT /v1/voice/calls/{id}/transcript`);
    throw new AppError('provider_not_configured', 'No language-model provider is configured, and this service offers none yet (there is no language-model connection kind or setting): grading a call needs one. Read the transcript with GET /v1/voice/calls/{id}/transcript');
  });

  app.get('/calls/:id/transcript', {
    schema: {
      tags: ['Calls'], operationId: 'getCallTranscript', summary: 'Get a call\'s transcript',
      description: 'The call\'s transcript as stored (posted with `PUT …/transcript`); 404 `Transcript not found` while there is none.',
      params: calls.schemas.params, response: { 200: Data(Transcript, 'The transcript'), ...errorResponses(404) },
    },
  }, async (req) => {
    const { database } = req.server.services;
    const row = await selectIn(database.db, 'calls', req.scope).select(['id', 'transcript']).where('id', '=', req.params.id).executeTakeFirst();
    if (!row) throw notFound(calls.notFound);
    if (row.transcript === null) throw notFound('Transcript not found');
    return { data: { call_id: row.id, text: row.transcript } };
  });

  app.put('/calls/:id/transcript', {
    schema: {
      tags: ['Calls'], operationId: 'putCallTranscript', summary: 'Store a call\'s transcript',
      description: 'Stores (or replaces) the transcript of a call that ended (409 before: the call is still going).',
      params: calls.schemas.params, body: TranscriptBody, response: { 200: Data(Transcript, 'The transcript stored'), ...errorResponses(404, 409) },
    },
  }, (req, reply) => mutate(req, reply, 200, async (w) => {
    const row = await callOf(w, req.params.id);
    if (['queued', 'ringing', 'in-progress'].includes(String(row.status))) throw conflict(`A call that is ${row.status} has no transcript yet`);
    await updateIn(w.tx, 'calls', w.scope).set({ transcript: req.body.text, updated_at: w.now }).where('id', '=', row.id).execute();
    return { call_id: row.id, text: req.body.text };
  }));
}
