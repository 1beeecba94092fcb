// Dialer sessions: an agent calling through a list of contacts from one of the organization's
// numbers, up to `parallel_lines` calls at once, in each contact's calling hours. Created `paused`;
// running, it is worked by its dialer job (dialer.ts) until the list is exhausted (`completed`),
// and it can be paused, resumed and stopped by action or by `PATCH {"status": …}` (the lifecycle's
// moves). How far it got is kept on the row: the pass, the list cursor, and the contacts skipped.
import { defineResource } from '../../platform/resource/define.ts';
import { boolean, int, json, ref, text, timestamp } from '../../platform/resource/fields.ts';
import { CallingWindowInput, CallingWindowOutput, DEFAULT_WINDOW, sessionDeleted, sessionWritten, started } from './sessions.store.ts';

export const SESSION_STATES = ['paused', 'running', 'stopped', 'completed'] as const;

export const dialerSessions = defineResource({
  name: 'dialer_session', plural: 'sessions', prefix: 'dls', table: 'dialer_sessions', notFound: 'Dialer session not found',
  tag: 'Dialer sessions', tagDescription: 'An agent calling through a list of contacts, several lines at once, in each contact\'s calling hours',
  fields: {
    list_id: ref('lists', { required: true, createOnly: true, onDelete: 'restrict', check: false, prefix: 'lst', description: 'The list of contacts to call (404 unknown, 400 a list of another type)' }),
    agent_id: ref('voice_agents', { required: true, createOnly: true, onDelete: 'restrict', prefix: 'vag', description: 'The agent the calls are connected to (404 `Voice agent not found`)' }),
    number_id: ref('voice_numbers', { required: true, createOnly: true, onDelete: 'restrict', prefix: 'vnum', description: 'The number the calls go from (404 `Voice number not found`)' }),
    parallel_lines: int({ nullable: false, default: 1, min: 1, max: 4, description: 'Calls placed at once, 1 (default) to 4. The first answered is connected to the agent; the others are dropped (`canceled`) and their contacts called again later', example: 2 }),
    calling_window: json({ nullable: false, default: DEFAULT_WINDOW, input: CallingWindowInput, output: CallingWindowOutput, description: 'The hours contacts may be called, in each contact\'s own time zone (8:00 to 21:00 when omitted); a contact outside them waits until they open' }),
    script: text({ max: 20_000, description: 'What the agent says, in markdown: shown beside the current call', example: 'Hi {{first_name}}, this is Ada from Acme…' }),
    exhausted: boolean({ readOnly: true, nullable: false, default: false, description: 'Whether every contact of the list was taken (those waiting for their hours or to be called again aside); read-only', example: false }),
    pass: int({ readOnly: true, nullable: false, default: 1, description: 'Which pass through the list this is; read-only', example: 1 }),
    started_at: timestamp({ readOnly: true, description: 'When it first ran, unix seconds; read-only', example: 1767225600 }),
    completed_at: timestamp({ readOnly: true, description: 'When it completed or was stopped, unix seconds; read-only', example: 1767229200 }),
  },
  filters: { status: 'eq', list_id: { op: 'eq', description: 'Only sessions over this list' }, agent_id: { op: 'eq', description: 'Only sessions of this agent' } },
  // The dialer moves its cursor without an event: never served from the list cache.
  readsClock: true,
  ownedTables: ['dialer_queue'],
  hooks: { beforeWrite: sessionWritten, beforeDelete: sessionDeleted },
  lifecycle: {
    states: SESSION_STATES, initial: 'paused',
    description: '`paused` (created so) ⇄ `running` → `completed` when the list is exhausted, and `stopped` from either for good. Move it by its actions or by `PATCH {"status": "running" | "paused" | "stopped"}`',
    actions: {
      resume: {
        from: ['paused'], to: 'running', event: 'running', participle: 'resumed', guard: started, stamps: [], errors: [503],
        summary: 'Run a dialer session', eventDescription: 'A dialer session runs: it dials the next contacts of its list',
        description: 'Starts (or resumes) dialing: up to `parallel_lines` calls at once while the agent is `available`. In live mode the session\'s number needs a telephony provider (its connection, the default one, or TELEPHONY_PROVIDER; else 503 `provider_not_configured`).',
      },
      pause: {
        from: ['running'], to: 'paused', event: 'paused',
        summary: 'Pause a dialer session', eventDescription: 'A dialer session was paused: no new call is placed',
        description: 'Stops placing new calls; calls in progress go on to their end. The session keeps its place in the list.',
      },
      stop: {
        from: ['paused', 'running'], to: 'stopped', event: 'stopped', stamps: ['completed_at'],
        summary: 'Stop a dialer session', eventDescription: 'A dialer session was stopped for good',
        description: 'Ends the session for good: no new call is placed (calls in progress go on to their end), and contacts still waiting are not called.',
      },
      complete: {
        from: ['running'], to: 'completed', event: 'completed', stamps: ['completed_at'], route: false,
        summary: 'Complete a dialer session', description: 'Recorded by the dialer once every contact of the list was called or skipped and no call is left.',
        eventDescription: 'A dialer session completed: its list is exhausted',
      },
    },
    moves: { running: 'resume', paused: 'pause', stopped: 'stop' },
    frozen: { stopped: '*', completed: '*' },
  },
  routes: {
    docs: {
      list: { summary: 'List dialer sessions', description: 'Lists dialer sessions, newest first; filter by `status`, `list_id`, `agent_id`.' },
      create: { summary: 'Create a dialer session', description: 'Creates a `paused` session over a list of contacts (404 unknown, 400 another type), for an agent, from a number. Run it with `POST …/{id}/resume` or `PATCH {"status": "running"}`.' },
      update: { summary: 'Update a dialer session', description: 'Changes `parallel_lines`, `calling_window` or `script`, and with `status` moves the session (`running`, `paused`, `stopped`) as its actions do. A stopped or completed session is 409.' },
      delete: { summary: 'Delete a dialer session', description: 'Deletes a session that is not running (409: pause or stop it first); its calls stay, with their `session_id`.' },
    },
    errors: { create: [404], update: [404, 409, 503], delete: [409] },
  },
});
