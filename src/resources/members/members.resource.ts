// Members: the people of the organization, who own mailboxes, are assigned tasks and inbox threads,
// host bookings and take calls. Work names a member by id (`assignee: "mem_…"`, assignee.ts); a
// member who has left is deactivated (`is_active: false`), and deleted only once no open work is theirs.
import { defineResource } from '../../platform/resource/define.ts';
import { boolean, email, enumOf, text, timeZone } from '../../platform/resource/fields.ts';
import { Str } from '../../platform/schemas.ts';
import { MEMBER_NOT_FOUND } from './assignee.ts';
import { beforeDelete, nameOrEmailContains } from './members.store.ts';

export const MEMBER_ROLES = ['admin', 'member'] as const;

export const members = defineResource({
  name: 'member', plural: 'members', prefix: 'mem', table: 'members', notFound: MEMBER_NOT_FOUND,
  tag: 'Members', tagDescription: 'The people of the organization, who are assigned tasks and own the work',
  fields: {
    name: text({ required: true, min: 1, max: 200, description: 'Full name', example: 'Ada Lovelace' }),
    email: email({ required: true, unique: true, description: 'E-mail address, stored lower-case; unique within the organization and mode (a second holder is 409 naming the first)', example: 'ada@example.com' }),
    timezone: timeZone({ nullable: false, default: 'UTC', description: 'The member\'s IANA time zone (`Europe/Berlin`), in which their working hours and availability are read; `UTC` when omitted. A name the zone data does not know, or an offset such as `+02:00`, is 422', example: 'Europe/London' }),
    role: enumOf(MEMBER_ROLES, { nullable: false, default: 'member', description: '`admin` or `member` (default): what the member may manage in your product', example: 'member' }),
    is_active: boolean({ nullable: false, default: true, description: 'False once the member has left: they keep their records and assignments, and can be deleted when no open work is theirs; true when omitted', example: true }),
  },
  filters: {
    role: { op: 'eq', description: 'Only members of this role' },
    is_active: { op: 'eq', description: 'Only active (true) or deactivated (false) members', normalize: (v: boolean) => (v ? 1 : 0) },
    email: { op: 'eq', description: 'The member of this e-mail address, ignoring case', normalize: (v: string) => v.trim().toLowerCase() },
    search: { op: 'where', where: nameOrEmailContains, schema: Str({ description: 'Only members whose name or e-mail address contains this text, case-insensitively', maxLength: 200, examples: ['ada'] }) },
  },
  eventDocs: { updated: 'A member was changed (name, e-mail, time zone, role, or deactivated); `previous_attributes` holds the earlier values' },
  hooks: { beforeDelete },
  routes: {
    docs: {
      list: { description: 'Lists the organization\'s members, newest first, with an exact `total`. Filters combine: `role`, `is_active`, `email` (exact, ignoring case) and `search` (name or e-mail contains, case-insensitive).' },
      create: { description: 'Adds a member. `email` is unique within the organization and mode: a second member with it is 409 naming the first. `timezone` must be an IANA zone name (422 naming the field otherwise) and is `UTC` when omitted; `role` is `member` and `is_active` true when omitted.' },
      update: { description: 'Changes the fields given. Set `is_active: false` when a member leaves: their tasks and other records keep naming them. An e-mail another member has is 409; an unknown time zone is 422. An empty body is 400 `No fields to update`.' },
      delete: { description: 'Deletes a member. While the member is the assignee of open tasks the delete is 409 with their number: reassign or complete them first, or deactivate the member instead. Completed tasks keep the member\'s id as their `assignee`. Reading the member afterwards is 404.' },
    },
    errors: { create: [409], update: [409], delete: [409] },
  },
});
