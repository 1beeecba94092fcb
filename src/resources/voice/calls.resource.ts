// Calls: each one a dialer session placed (or, later, one received), with Twilio's states, moved
// forward only by the provider's callbacks, the local driver's played outcome and reconciliation
// (call-updates.ts). Read-only through the API beside the disposition, transcript and grading of
// voice.routes.ts; their events are their own (`call.started`, `call.completed`, `call.dispositioned`).
import { Type } from 'typebox';
import { CALL_STATUSES } from '../../platform/providers/telephony/telephony.ts';
import { defineResource } from '../../platform/resource/define.ts';
import { enumOf, int, text, timestamp } from '../../platform/resource/fields.ts';

export const DISPOSITIONS = ['connected', 'left_voicemail', 'not_interested', 'meeting_booked', 'call_back_later', 'wrong_number', 'do_not_call'] as const;

const readOnly = { readOnly: true } as const;
const id = (description: string, example: string) => text({ ...readOnly, description, example });

export const calls = defineResource({
  name: 'call', plural: 'calls', prefix: 'call', table: 'calls', notFound: 'Call not found',
  tag: 'Calls', tagDescription: 'Calls placed by dialer sessions, with their states, dispositions and transcripts',
  fields: {
    session_id: id('The dialer session that placed it', 'dls_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'),
    contact_id: id('The contact called', 'con_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'),
    agent_id: id('The agent it is connected to when answered', 'vag_01JD8X4M6R2T9Q3V5W7Y8Z0A1B'),
    direction: enumOf(['outbound', 'inbound'] as const, { ...readOnly, nullable: false, description: '`outbound` (placed by the service) or `inbound`', example: 'outbound' }),
    from_number: text({ ...readOnly, nullable: false, description: 'The number called from, E.164', example: '+14155550100' }),
    to_number: text({ ...readOnly, nullable: false, description: 'The number called, E.164', example: '+442079460123' }),
    status: enumOf(CALL_STATUSES, { ...readOnly, nullable: false, description: '`queued` → `ringing` → `in-progress` → `completed`, `busy`, `no-answer`, `failed` or `canceled` (the last five are final). Forward only: a late, repeated or out-of-order callback never moves a call back, and the first final state stays', example: 'completed' }),
    provider: text({ ...readOnly, nullable: false, description: 'Which provider placed it: `local` or `twilio`', example: 'local' }),
    provider_call_id: text({ ...readOnly, description: 'The provider\'s id of the call (Twilio\'s CallSid)', example: 'CA0123456789abcdef0123456789abcdef' }),
    disposition: enumOf(DISPOSITIONS, { ...readOnly, description: 'What the agent recorded of it (`POST /v1/voice/calls/{id}/disposition`); null until then', example: 'meeting_booked' }),
    notes: text({ ...readOnly, description: 'The agent\'s notes', example: 'Wants a demo next week' }),
    error: text({ ...readOnly, description: 'Why it failed or was canceled', example: 'Dropped: the agent took another call' }),
    attempt: int({ ...readOnly, nullable: false, description: 'Which call to the contact this is in the session\'s pass (a dropped call\'s contact is called again)', example: 1 }),
    ringing_at: timestamp({ ...readOnly, description: 'When it began ringing, unix seconds', example: 1767225600 }),
    answered_at: timestamp({ ...readOnly, description: 'When it was answered, unix seconds', example: 1767225605 }),
    ended_at: timestamp({ ...readOnly, description: 'When it reached its final state, unix seconds', example: 1767225725 }),
    duration: int({ ...readOnly, description: 'Seconds talked, once ended', example: 120 }),
  },
  computed: {
    voicemail: Type.Boolean({ description: 'Whether a machine answered (voicemail), as the provider detected', examples: [false] }),
    has_transcript: Type.Boolean({ description: 'Whether a transcript is stored (`GET /v1/voice/calls/{id}/transcript`)', examples: [false] }),
  },
  filters: {
    session_id: { op: 'eq', description: 'Only calls of this dialer session' },
    contact_id: { op: 'eq', description: 'Only calls to this contact' },
    status: 'eq',
    disposition: 'eq',
  },
  crudEvents: [],
  // Callbacks move calls with events of their own, which the list cache does not follow.
  readsClock: true,
  hooks: {
    async enrich(_db, _scope, rows, records) {
      rows.forEach((row, i) => {
        records[i].voicemail = row.answered_by === 'machine';
        records[i].has_transcript = row.transcript !== null && row.transcript !== undefined;
      });
    },
  },
  routes: {
    omit: ['create', 'update', 'delete'],
    docs: {
      list: { summary: 'List calls', description: 'Lists calls, newest first; filter by `session_id`, `contact_id`, `status`, `disposition`.' },
      get: { summary: 'Get a call', description: 'Reads one call with its state.' },
    },
  },
});
