// Voice agents: the members who take calls, with their status. A dialer session dials for one
// agent, and only while the agent is `available`; the agent is `busy` while a call is connected to
// them (`current_call_id`), moved by the calls themselves.
import { defineResource } from '../../platform/resource/define.ts';
import { enumOf, ref, text } from '../../platform/resource/fields.ts';
import { agentWritten } from './sessions.store.ts';
import { storePhoneIn } from '../../platform/phone-region.ts';

export const AGENT_STATUSES = ['available', 'busy', 'offline'] as const;

export const voiceAgents = defineResource({
  name: 'voice_agent', plural: 'agents', prefix: 'vag', table: 'voice_agents', notFound: 'Voice agent not found',
  tag: 'Voice agents', tagDescription: 'The members who take calls, and whether they can take one now',
  fields: {
    member_id: ref('members', { required: true, unique: true, createOnly: true, onDelete: 'restrict', prefix: 'mem', description: 'The member (404 `Member not found`; one agent per member: 409). A member who is an agent cannot be deleted (409) until the agent is' }),
    status: enumOf(AGENT_STATUSES, { nullable: false, default: 'offline', description: '`available` (a running session dials for them), `busy` (on a call: set by the service while one is connected) or `offline` (default: nothing is dialed)', example: 'available' }),
    phone: text({ max: 50, description: 'Where answered calls are connected to the agent: a phone number (stored in E.164 form); null: the agent\'s browser client (its identity is the agent\'s id)', example: '+14155550123' }),
    current_call_id: text({ readOnly: true, description: 'The call connected to the agent now; null when none. Read-only', example: 'call_01JD8X4M6R2T9Q3V5W7Y8Z0A1B' }),
  },
  filters: { status: 'eq' },
  hooks: {
    beforeWrite: (w, row) => storePhoneIn(w, row, 'phone'),
    afterWrite: agentWritten,
  },
  routes: {
    docs: {
      list: { summary: 'List voice agents', description: 'Lists the members who take calls, newest first; filter by `status`.' },
      create: { summary: 'Add a voice agent', description: 'Makes a member an agent (`offline` unless `status` says otherwise).' },
      update: { summary: 'Update a voice agent', description: 'Changes the agent\'s status or phone. Becoming `available` wakes the running sessions dialing for them.' },
      delete: { summary: 'Remove a voice agent', description: 'The member takes no more calls; an agent with dialer sessions is 409 until they are deleted.' },
    },
    errors: { create: [404, 409], delete: [409] },
  },
});
