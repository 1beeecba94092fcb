// What a record's page of the e-mail channel shows beside its details: a domain's DNS records to
// publish (each value with a copy button) and its check, a mailbox's test message, a thread's
// messages and operations, and an outbox message's simulated outcomes (test mode).
import { api } from './api.js';
import { DateTime, ErrorMessage, State } from './common.js';
import { Choice } from './forms.js';
import { html, useState } from './html.js';

/** Runs one call of a section, keeping what it said (or its error) for the section to show. */
function useCall(onChange) {
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const call = async (path, body, done) => {
    setError(null);
    try {
      const answer = await api(path, { method: 'POST', body });
      setNotice(typeof done === 'function' ? done(answer.data) : done);
      if (answer.data?.id) onChange?.(answer.data);
    } catch (e) {
      setError(e);
    }
  };
  return { call, status: html`<p role="status">${notice}</p><${ErrorMessage} error=${error} />` };
}

/** Puts text in the clipboard; without the Clipboard API (an insecure page), a selected textarea. */
async function copyText(value) {
  if (navigator.clipboard?.writeText) {
    try {
      await navigator.clipboard.writeText(value);
      return;
    } catch { /* denied: the fallback below */ }
  }
  const area = document.createElement('textarea');
  area.value = value;
  document.body.append(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

function CopyButton({ value, label }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await copyText(value);
    setCopied(true);
  };
  return html`<button type="button" aria-label=${`Copy ${label}`} onClick=${copy}>${copied ? 'Copied' : 'Copy'}</button>`;
}

function DomainRecords({ record, onChange }) {
  const { call, status } = useCall(onChange);
  const verify = () => call(`/v1/domains/${record.id}/verify`, undefined, (d) => `Checked: ${d.status}.`);
  return html`<section aria-labelledby="dns-title">
    <h2 id="dns-title">DNS records to publish</h2>
    <p>Status <${State} value=${record.status} /> ${record.last_checked_at && html`· last checked <${DateTime} seconds=${record.last_checked_at} />`}</p>
    <button type="button" onClick=${verify}>Verify now</button>
    ${status}
    <table>
      <thead><tr><th scope="col">Type</th><th scope="col">Name</th><th scope="col">Value</th><th scope="col">Purpose</th><th scope="col">Status</th><th scope="col">Finding</th></tr></thead>
      <tbody>${record.records.map((r) => html`<tr>
        <td>${r.type}</td><td><code>${r.name}</code> <${CopyButton} value=${r.name} label=${`${r.purpose} name`} /></td>
        <td><code class="dns-value">${r.value}</code> <${CopyButton} value=${r.value} label=${`${r.purpose} value`} /></td>
        <td>${r.purpose}</td><td><${State} value=${r.status} /></td><td>${r.finding ?? ''}</td>
      </tr>`)}</tbody>
    </table>
  </section>`;
}

function MailboxTest({ record }) {
  const { call, status } = useCall();
  const [to, setTo] = useState('');
  const send = (e) => {
    e.preventDefault();
    call(`/v1/mailboxes/${record.id}/test`, to ? { to } : {}, (r) => `${r.ok ? 'Sent' : 'Not sent'}: ${r.response}`);
  };
  return html`<section aria-labelledby="test-title">
    <h2 id="test-title">Send a test message</h2>
    <form onSubmit=${send}>
      <label for="test-to">To (the mailbox itself when empty)</label>
      <input id="test-to" type="email" value=${to} onInput=${(e) => setTo(e.target.value)} />
      <button type="submit">Send test message</button>
    </form>
    ${status}
  </section>`;
}

function Message({ message }) {
  return html`<article class="message">
    <p><strong>${message.from_name ?? message.from_address ?? ''}</strong> ${message.direction === 'outbound' ? '(sent)' : ''} · <${DateTime} seconds=${message.date ?? message.created_at} /></p>
    ${message.subject && html`<p>${message.subject}</p>`}
    ${message.html
      ? html`<iframe sandbox="" srcdoc=${message.html} title=${`Message ${message.id}`} class="message-html"></iframe>`
      : html`<pre class="message-text">${message.text ?? ''}</pre>`}
  </article>`;
}

function ThreadActions({ record, onChange }) {
  const { call, status } = useCall(onChange);
  const [assignee, setAssignee] = useState(record.assignee ?? '');
  const [tag, setTag] = useState('');
  const [until, setUntil] = useState('');
  const [reply, setReply] = useState('');
  const [mailbox, setMailbox] = useState('');
  const path = `/v1/inbox/${record.id}`;
  const submit = (fn) => (e) => { e.preventDefault(); fn(); };
  return html`<section aria-labelledby="thread-actions">
    <h2 id="thread-actions">Operations</h2>
    <p>Status <${State} value=${record.status} /></p>
    <div class="actions">
      ${record.status === 'closed'
        ? html`<button type="button" onClick=${() => call(`${path}/reopen`, {}, 'Reopened.')}>Reopen</button>`
        : html`<button type="button" onClick=${() => call(`${path}/close`, {}, 'Closed.')}>Close</button>`}
    </div>
    <form onSubmit=${submit(() => call(`${path}/assign`, { assignee: assignee || null }, 'Assigned.'))}>
      <label for="assignee">Assignee</label>
      <${Choice} id="assignee" resource="members" value=${assignee} set=${setAssignee} none="Nobody" />
      <button type="submit">Assign</button>
    </form>
    <form onSubmit=${submit(() => call(`${path}/tag`, { tags: [...(record.tags ?? []), tag] }, 'Tagged.'))}>
      <label for="tag">Tag</label>
      <input id="tag" value=${tag} onInput=${(e) => setTag(e.target.value)} />
      <button type="submit">Add tag</button>
    </form>
    <form onSubmit=${submit(() => call(`${path}/snooze`, { until: Math.floor(new Date(until).getTime() / 1000) }, 'Snoozed.'))}>
      <label for="until">Snooze until</label>
      <input id="until" type="datetime-local" required value=${until} onInput=${(e) => setUntil(e.target.value)} />
      <button type="submit">Snooze</button>
    </form>
    <form onSubmit=${submit(() => call(`${path}/reply`, { text: reply, ...(mailbox ? { mailbox_id: mailbox } : {}) }, 'Reply queued.'))}>
      <label for="reply-mailbox">From mailbox</label>
      <${Choice} id="reply-mailbox" resource="mailboxes" name=${(m) => m.email} value=${mailbox} set=${setMailbox} none="The thread's" />
      <label for="reply">Reply</label>
      <textarea id="reply" required value=${reply} onInput=${(e) => setReply(e.target.value)}></textarea>
      <button type="submit">Send reply</button>
    </form>
    ${status}
    <h2>Messages</h2>
    ${(record.messages ?? []).map((m) => html`<${Message} message=${m} />`)}
  </section>`;
}

const OUTCOMES = ['delivered', 'bounced', 'opened', 'clicked', 'replied'];

function OutboxMessage({ record, onChange }) {
  const { call, status } = useCall(onChange);
  return html`<section aria-labelledby="outbox-body">
    <h2 id="outbox-body">Message</h2>
    <p>Status <${State} value=${record.status} /></p>
    ${record.html ? html`<iframe sandbox="" srcdoc=${record.html} title="Message body" class="message-html"></iframe>` : html`<pre class="message-text">${record.text ?? ''}</pre>`}
    <div class="actions">${OUTCOMES.map((o) => html`<button type="button" onClick=${() => call(`/v1/outbox/${record.id}/simulate`, { outcome: o }, `Simulated: ${o}.`)}>Simulate ${o}</button>`)}</div>
    ${status}
  </section>`;
}

/** The e-mail section of a record's page, if its resource has one. */
export function EmailSections({ resource, record, onChange }) {
  switch (resource) {
    case 'domains': return html`<${DomainRecords} record=${record} onChange=${onChange} />`;
    case 'mailboxes': return html`<${MailboxTest} record=${record} />`;
    case 'inbox': return html`<${ThreadActions} record=${record} onChange=${onChange} />`;
    case 'outbox': return html`<${OutboxMessage} record=${record} onChange=${onChange} />`;
    default: return null;
  }
}
