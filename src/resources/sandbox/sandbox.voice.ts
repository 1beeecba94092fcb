// The sandbox's dialer: the number test mode calls from (configuration, kept by a reset: added only
// when missing), Ada as an available agent, and a paused session over the inbound demo requests with
// a script, ready to run: the local driver plays each call as its number's last digit says (see
// docs/api.md, Voice and dialer), so running it calls nobody. Made through the kernel, so their
// events are the API's.
import { createRecord } from '../../platform/resource/store.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { WriteContext } from '../../platform/write.ts';
import { voiceAgents } from '../voice/agents.resource.ts';
import { voiceNumbers } from '../voice/numbers.resource.ts';
import { dialerSessions } from '../voice/sessions.resource.ts';

export const SANDBOX_DIALER_SESSIONS = 1;
const NUMBER = { phone_number: '+14155550100', label: 'Sandbox line' };

export async function seedSandboxVoice(w: WriteContext, listId: string): Promise<void> {
  const ada = await selectIn(w.tx, 'members', w.scope).select('id').where('email', '=', 'ada@example.com').executeTakeFirstOrThrow();
  const known = await selectIn(w.tx, 'voice_numbers', w.scope).select('id').where('phone_number', '=', NUMBER.phone_number).executeTakeFirst();
  const number = known ?? await createRecord(voiceNumbers, w, NUMBER);
  const agent = await createRecord(voiceAgents, w, { member_id: ada.id, status: 'available' });
  await createRecord(dialerSessions, w, {
    list_id: listId, agent_id: agent.id, number_id: number.id, parallel_lines: 2,
    script: 'Hi {{ first_name }}, this is Ada from Example Inc. You asked for a demo: is this a good moment?',
  });
}
