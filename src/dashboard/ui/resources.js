// What the record screens show of each resource: the table's columns, its search and filters, the
// fields of its "New …" form, and the simple actions of a record's page. tables.js draws them all.
import { DateTime, formatMoney, State } from './common.js';
import { RecordLink } from './fields.js';
import { html } from './html.js';

const money = (field) => (row) => formatMoney(row[field], row.currency);
const when = (field) => (row) => html`<${DateTime} seconds=${row[field]} />`;
const state = (field) => (row) => html`<${State} value=${row[field]} />`;
const excerpt = (text, size = 90) => (text.length > size ? `${text.slice(0, size - 1)}…` : text);

const PRIORITIES = [[0, 'None'], [1, 'Low'], [2, 'Medium'], [3, 'High'], [4, 'Urgent']];
const TASK_TYPES = [['todo', 'To-do'], ['call', 'Call'], ['email', 'E-mail'], ['linkedin', 'LinkedIn'], ['meeting', 'Meeting']];
/** The options of a select of states, each state its own label, capitalized. */
export const stateOptions = (states) => states.map((s) => [s, s.charAt(0).toUpperCase() + s.slice(1)]);
const QUOTE_STATES = stateOptions(['draft', 'sent', 'viewed', 'accepted', 'declined', 'expired', 'void']);
const SEQUENCE_STATES = stateOptions(['drafted', 'scheduling', 'live', 'pausing', 'paused', 'resuming', 'terminating', 'completed']);
const counted = (key) => (row) => String(row.counts?.[key] ?? '—');
const labelIn = (options, value) => options.find(([v]) => v === value)?.[1] ?? value;
/** A record a task or note is about, picked by name and sent as its `associations`. */
const about = (resource, label) => ({
  name: `about_${resource}`, label, kind: 'record', resource, body: (id) => ({ associations: { [`${resource.replace(/ies$/, 'y').replace(/s$/, '')}_ids`]: [id] } }),
});

/** A part of a connection's settings or credentials, left out while empty. */
const setting = (group, key, label, kind, cast = String) => ({
  name: `${group}_${key}`, label, kind, max: 253,
  body: (v) => (v === '' || v === false || (kind === 'number' && !v) ? {} : { settings: { [group]: { [key]: cast(v) } } }),
});
const smtp = (key, label, kind, cast) => setting('smtp', key, label, kind, cast);
const imap = (key, label, kind, cast) => setting('imap', key, label, kind, cast);
const secret = (key, label, kind) => ({ name: key, label, kind, max: 4000, body: (v) => (v ? { credentials: { [key]: v } } : {}) });

/**
 * Per resource: `title` and `noun`; `search`, the placeholder of its full-text search (none: no
 * search); `filters`, selects whose value is a query parameter of the list, and as conditions of a
 * search (`conditions`, else `param` equal to the value); `columns`, [field, title, render?], the
 * first linking to the record; `create`, the fields of its form; `heading`, a record's title;
 * `searchParam`, a list's own text filter searched with instead;
 * `actions`, buttons of a record's page that PATCH it: [label, body, what to say once done].
 */
export const RESOURCES = {
  contacts: {
    title: 'Contacts', noun: 'contact', search: 'Name, title, company or e-mail…',
    columns: [['name', 'Name'], ['title', 'Title'], ['company', 'Company'], ['work_email', 'Work e-mail']],
  },
  companies: {
    title: 'Companies', noun: 'company', search: 'Name, domain or industry…',
    columns: [['name', 'Name'], ['domain', 'Domain'], ['industry', 'Industry'], ['country', 'Country']],
  },
  deals: {
    title: 'Deals', noun: 'deal', search: 'Deal name, owner or source…',
    filters: [{ param: 'status', label: 'Status', options: [['open', 'Open'], ['won', 'Won'], ['lost', 'Lost']] }],
    columns: [['name', 'Name'], ['amount', 'Amount', money('amount')], ['status', 'Status', state('status')], ['owner', 'Owner']],
  },
  lists: {
    title: 'Lists', noun: 'list',
    filters: [{ param: 'type', label: 'List type', options: ['contacts', 'companies', 'suppressions', 'deals', 'leads'].map((t) => [t, t]) }],
    columns: [['name', 'Name'], ['type', 'Type'], ['member_count', 'Members']],
  },
  tasks: {
    title: 'Tasks', noun: 'task', search: 'Words of the title or description…',
    filters: [
      // Overdue is a state of open tasks, computed when read: as search conditions, open and overdue.
      {
        param: 'status', label: 'Status', options: [['open', 'Open'], ['overdue', 'Overdue'], ['completed', 'Completed']],
        conditions: (v) => (v === 'overdue' ? [{ field: 'status', operator: 'eq', value: 'open' }, { field: 'overdue', operator: 'eq', value: true }] : [{ field: 'status', operator: 'eq', value: v }]),
      },
      { param: 'type', label: 'Type', options: TASK_TYPES },
      { param: 'priority', label: 'Priority', options: PRIORITIES },
    ],
    columns: [
      ['title', 'Title'], ['type', 'Type', (t) => labelIn(TASK_TYPES, t.type)],
      ['status', 'Status', (t) => html`<${State} value=${t.overdue ? 'overdue' : t.status} />`],
      ['priority', 'Priority', (t) => labelIn(PRIORITIES, t.priority)], ['due_at', 'Due', when('due_at')], ['assignee', 'Assignee'],
    ],
    create: [
      { name: 'title', label: 'Title', required: true, max: 500 },
      { name: 'type', label: 'Type', kind: 'select', options: TASK_TYPES },
      { name: 'priority', label: 'Priority', kind: 'select', options: PRIORITIES },
      { name: 'due_at', label: 'Due', kind: 'datetime' },
      { name: 'assignee', label: 'Assignee', max: 200, placeholder: 'Name or e-mail' },
      about('contacts', 'About a contact'), about('deals', 'About a deal'),
      { name: 'description', label: 'Description', kind: 'textarea', max: 10000 },
    ],
    heading: (t) => t.title,
    actions: (t) => (t.status === 'open' ? [['Mark completed', { status: 'completed' }, 'Completed.']] : [['Reopen', { status: 'open' }, 'Reopened.']]),
  },
  notes: {
    title: 'Notes', noun: 'note', search: 'Words of the note…',
    filters: [{ param: 'pinned', label: 'Pinned', options: [[true, 'Pinned'], [false, 'Not pinned']] }],
    columns: [['content', 'Note', (n) => excerpt(n.content)], ['created_by', 'Written by'], ['pinned', 'Pinned']],
    create: [
      { name: 'content', label: 'Note', kind: 'textarea', required: true, max: 100000 },
      { name: 'created_by', label: 'Written by', max: 200, placeholder: 'Name or e-mail' },
      about('contacts', 'About a contact'), about('deals', 'About a deal'),
      { name: 'pinned', label: 'Pin it', kind: 'checkbox' },
    ],
    heading: (n) => excerpt(n.content.split('\n')[0], 60),
    actions: (n) => [n.pinned ? ['Unpin', { pinned: false }, 'Unpinned.'] : ['Pin', { pinned: true }, 'Pinned: it shows on top of the records it is about.']],
  },
  products: {
    title: 'Products', noun: 'product', search: 'Name, SKU or description…',
    filters: [{ param: 'active', label: 'Availability', options: [[true, 'Active'], [false, 'Inactive']] }],
    columns: [['name', 'Name'], ['sku', 'SKU'], ['unit_price', 'Unit price', money('unit_price')], ['active', 'Active']],
    create: [
      { name: 'name', label: 'Name', required: true, max: 500 },
      { name: 'sku', label: 'SKU', max: 100 },
      { name: 'unit_price', label: 'Unit price', kind: 'money', required: true },
      { name: 'currency', label: 'Currency', kind: 'currency' },
      { name: 'description', label: 'Description', kind: 'textarea', max: 2000 },
      { name: 'active', label: 'Can be quoted', kind: 'checkbox', initial: true },
    ],
    actions: (p) => [p.active ? ['Deactivate', { active: false }, 'Deactivated: new quote lines can no longer use it.'] : ['Activate', { active: true }, 'Activated: quotes can use it again.']],
  },
  quotes: {
    title: 'Quotes', noun: 'quote', search: 'Number, title or terms…',
    filters: [{ param: 'status', label: 'Status', options: QUOTE_STATES }],
    columns: [
      ['number', 'Number'], ['title', 'Title'], ['status', 'Status', state('status')], ['total', 'Total', money('total')],
      ['contact_id', 'To', (q) => (q.contact_id ? html`<${RecordLink} resource="contacts" id=${q.contact_id} />` : '—')],
      ['valid_until', 'Valid until', when('valid_until')],
    ],
    create: [
      { name: 'title', label: 'Title', required: true, max: 500 },
      { name: 'contact_id', label: 'Contact', kind: 'record', resource: 'contacts' },
      { name: 'deal_id', label: 'Deal', kind: 'record', resource: 'deals' },
      { name: 'currency', label: 'Currency', kind: 'currency' },
      { name: 'tax_percent', label: 'Tax rate (%)', kind: 'number', max: 100, step: '0.0001' },
      { name: 'valid_until', label: 'Valid until', kind: 'datetime' },
      { name: 'terms', label: 'Terms', kind: 'textarea', max: 10000 },
    ],
    heading: (q) => `${q.number} · ${q.title}`,
  },
  domains: {
    title: 'Sending domains', noun: 'sending domain',
    filters: [{ param: 'status', label: 'Status', options: [['pending', 'Pending'], ['verified', 'Verified'], ['failed', 'Failed']] }],
    columns: [['domain', 'Domain'], ['status', 'Status', state('status')], ['last_checked_at', 'Last checked', when('last_checked_at')]],
    create: [
      { name: 'domain', label: 'Domain', required: true, max: 253, placeholder: 'mail.example.com' },
      { name: 'description', label: 'Description', max: 500 },
    ],
    heading: (d) => d.domain,
  },
  mailboxes: {
    title: 'Mailboxes', noun: 'mailbox',
    columns: [
      ['email', 'Address'], ['display_name', 'Name'],
      ['allowance', 'Left today', (m) => (m.allowance ? `${m.allowance.remaining_today} of ${m.allowance.today}` : '—')],
      ['daily_limit', 'Daily limit'], ['hourly_limit', 'Hourly limit'],
    ],
    create: [
      { name: 'email', label: 'Address', required: true, max: 320 },
      { name: 'display_name', label: 'Name', max: 200 },
      { name: 'connection_id', label: 'Connection', kind: 'choice', resource: 'connections' },
      { name: 'daily_limit', label: 'Daily limit', kind: 'number', max: 100000 },
      { name: 'hourly_limit', label: 'Hourly limit', kind: 'number', max: 100000 },
      { name: 'warmup', label: 'Warm up', kind: 'checkbox', body: (on) => (on ? { warmup: { enabled: true } } : {}) },
    ],
    heading: (m) => m.email,
  },
  connections: {
    title: 'Connections', noun: 'connection',
    columns: [['name', 'Name'], ['kind', 'Kind'], ['provider', 'Provider'], ['credentials_set', 'Credentials set']],
    // An SMTP server (IMAP optional) of an e-mail connection; its username and password are written, never shown back.
    create: [
      { name: 'name', label: 'Name', required: true, max: 200 },
      { name: 'kind', label: 'Kind', kind: 'select', options: [['email', 'E-mail']] },
      { name: 'provider', label: 'Provider', kind: 'select', options: [['smtp', 'SMTP server'], ['local', 'Local (records only)']] },
      smtp('host', 'SMTP host'), smtp('port', 'SMTP port', 'number', Number), smtp('secure', 'SMTP over TLS', 'checkbox', Boolean),
      imap('host', 'IMAP host (optional)'), imap('port', 'IMAP port', 'number', Number),
      secret('username', 'Username'), secret('password', 'Password', 'password'),
    ],
  },
  inbox: {
    title: 'Inbox', noun: 'thread', search: 'Subject or sender…', searchParam: 'q',
    filters: [{ param: 'status', label: 'Status', options: [['open', 'Open'], ['snoozed', 'Snoozed'], ['closed', 'Closed']] }],
    columns: [['subject', 'Subject'], ['from_address', 'From'], ['status', 'Status', state('status')], ['assignee', 'Assignee'], ['tags', 'Tags']],
    heading: (t) => t.subject || t.id,
  },
  outbox: {
    title: 'Outbox', noun: 'message',
    filters: [{ param: 'status', label: 'Status', options: stateOptions(['queued', 'sent', 'delivered', 'bounced', 'failed', 'suppressed']) }],
    columns: [['subject', 'Subject'], ['to_addresses', 'To'], ['status', 'Status', state('status')], ['sent_at', 'Sent', when('sent_at')], ['opened_at', 'Opened', when('opened_at')]],
    heading: (m) => m.subject || m.id,
  },
  // A sequence's page adds its lifecycle, its steps with their analytics and its enrollments (sequences.js).
  sequences: {
    title: 'Sequences', noun: 'sequence', search: 'Words of the name…', searchParam: 'search',
    filters: [{ param: 'status', label: 'Status', options: SEQUENCE_STATES }],
    columns: [
      ['name', 'Name'], ['status', 'Status', state('status')], ['enrolled', 'Enrolled', counted('enrolled')], ['active', 'Active', counted('active')],
      ['finished', 'Finished', counted('finished')], ['replied', 'Replied', counted('replied')], ['bounced', 'Bounced', counted('bounced')],
    ],
  },
};

/** Records whose page shows a timeline. */
export const HAS_TIMELINE = new Set(['contacts', 'companies', 'deals']);
