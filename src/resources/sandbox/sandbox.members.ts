// The sandbox's members: an admin and two members in three time zones, whose e-mail addresses are
// those the sample tasks and notes name. Made through the kernel, so their events are the API's.
import { createRecord } from '../../platform/resource/store.ts';
import type { WriteContext } from '../../platform/write.ts';
import { members } from '../members/members.resource.ts';

const MEMBERS = [
  { name: 'Ada Lovelace', email: 'ada@example.com', timezone: 'Europe/London', role: 'admin' },
  { name: 'Grace Hopper', email: 'grace@example.com', timezone: 'America/New_York', role: 'member' },
  { name: 'Kenji Sato', email: 'kenji@example.com', timezone: 'Asia/Tokyo', role: 'member' },
];

/** How many members the sandbox holds. */
export const SANDBOX_MEMBERS = MEMBERS.length;

export async function seedSandboxMembers(w: WriteContext): Promise<void> {
  for (const member of MEMBERS) await createRecord(members, w, member);
}
