// Tasks: to-dos, calls, e-mails, LinkedIn touches and meetings, open or completed, associated with
// contacts, companies and deals. `overdue` (open and past `due_at`) is computed when read; see
// tasks.store.ts for `completed_at` and the completion events.
import { Type } from 'typebox';
import { defineResource } from '../../platform/resource/define.ts';
import { enumOf, int, text, timestamp } from '../../platform/resource/fields.ts';
import { Str, StringEnum } from '../../platform/schemas.ts';
import { afterWrite, beforeWrite, enrich, overdueValue, statusWhere } from './tasks.store.ts';

export const TASK_TYPES = ['todo', 'call', 'email', 'linkedin', 'meeting'] as const;
export const TASK_STATUSES = ['open', 'completed'] as const;
const time = (description: string) => Type.Integer({ minimum: 0, maximum: 1e11, description, examples: [1767225600] });

export const tasks = defineResource({
  name: 'task', plural: 'tasks', prefix: 'tsk', table: 'tasks', notFound: 'Task not found',
  tag: 'Tasks', tagDescription: 'Things to do about contacts, companies and deals, with due times and priorities',
  fields: {
    title: text({ required: true, min: 1, max: 500, description: 'What is to be done', example: 'Call Ada about the pilot' }),
    description: text({ max: 10_000, description: 'Details, in markdown', example: 'Ask about the security review' }),
    type: enumOf(TASK_TYPES, { nullable: false, default: 'todo', description: 'The kind of task: `todo` (default), `call`, `email`, `linkedin` or `meeting`', example: 'call' }),
    status: enumOf(TASK_STATUSES, { nullable: false, default: 'open', description: '`open` (default) or `completed`. Completing sets `completed_at`, reopening clears it; an open task past `due_at` is `overdue`', example: 'open' }),
    priority: int({ nullable: false, default: 0, max: 4, description: 'Priority from 0 (none, the default) to 4 (urgent)', example: 2 }),
    due_at: timestamp({ description: 'When the task is due, unix seconds', example: 1767225600 }),
    completed_at: timestamp({ readOnly: true, description: 'When the task was completed, unix seconds; null while open; read-only', example: 1767229200 }),
    assignee: text({ max: 200, description: 'Who is to do it: a member\'s id (`mem_…`; an unknown one is 404 `Member not found`), or a name, e-mail or id of your own. Answered as given', example: 'ada@example.com' }),
    external_key: text({ unique: true, min: 1, max: 200, description: 'Your own identifier of the task, unique within the organization and mode; `PUT /v1/tasks/assert` matches on it', example: 'crm-task-4711' }),
  },
  computed: {
    overdue: Type.Boolean({ description: 'True while the task is open and past `due_at`, computed when read (never stored); read-only', examples: [false] }),
  },
  filters: {
    status: { op: 'where', where: statusWhere, schema: StringEnum([...TASK_STATUSES, 'overdue'] as const, { description: 'Only tasks with this status; `overdue` is open tasks past `due_at` (`open` includes them)', examples: ['overdue'] }) },
    priority: { op: 'eq', description: 'Only tasks of this priority' },
    assignee: { op: 'eq', description: 'Only tasks of this assignee, exactly' },
    type: { op: 'eq', description: 'Only tasks of this type' },
    due_before: { field: 'due_at', op: 'lt', schema: time('Only tasks due before this time, unix seconds') },
    due_after: { field: 'due_at', op: 'gte', schema: time('Only tasks due at or after this time, unix seconds') },
    search: { field: 'title', op: 'contains', schema: Str({ description: 'Only tasks whose title contains this text, case-insensitively', maxLength: 500, examples: ['pilot'] }) },
  },
  search: ['title', 'description'],
  searchComputed: { overdue: { type: 'boolean', expr: overdueValue } },
  customFields: true,
  associations: ['contacts', 'companies', 'deals'],
  readsClock: true,
  assert: { keys: [{ field: 'external_key', normalize: (v) => v.trim() || null }] },
  ownedTables: ['record_associations'],
  hooks: { beforeWrite, afterWrite, enrich },
  routes: {
    docs: {
      list: { description: 'Lists tasks, newest first, with an exact `total`. Filters combine: `status` (`open`, `completed`, or `overdue`: open and past `due_at`), `priority`, `assignee`, `type`, `due_before` (exclusive), `due_after` (inclusive), `contact_id`, `company_id`, `deal_id` (associated with that record), `search` (title contains, case-insensitive), and `custom_fields.<name>`.' },
      create: { description: 'Creates a task, open unless `status` says otherwise. `associations` names the contacts, companies and deals it is about; an unknown one is 404 naming its kind (`Contact not found`). An `assignee` that is a member id (`mem_…`) must name a member of the organization, else 404 `Member not found`; any other text is kept as given. A second task with the same `external_key` is 409.' },
      update: { description: 'Changes the fields given. `status: completed` sets `completed_at` and records `task.completed`; `status: open` clears it and records `task.reopened`. Each kind of `associations` given replaces that kind\'s associations. An empty body is 400 `No fields to update`.' },
      delete: { description: 'Deletes a task with its associations; reading it afterwards is 404.' },
    },
    errors: { create: [404, 409], update: [404, 409] },
  },
});
