// The dialer screen: the organization's dialer sessions, and one session as its agent works it: its
// status with the operations the status allows, its numbers, the call connected to the agent now
// (the contact, their number, the script with the contact's fields filled in), and the disposition
// of the last call that ended without one. The session, its agent and calls are read again each
// second while it runs, so the screen follows the dialer.
import { api } from './api.js';
import { DateTime, ErrorMessage, Heading, State } from './common.js';
import { html, useEffect, useState } from './html.js';

const POLL_MS = 1000;
const DISPOSITIONS = ['connected', 'left_voicemail', 'not_interested', 'meeting_booked', 'call_back_later', 'wrong_number', 'do_not_call'];
const STATS = [['dialed', 'Dialed'], ['connected', 'Connected'], ['no_answer', 'No answer'], ['busy', 'Busy'], ['voicemail', 'Voicemail'], ['average_talk_seconds', 'Average talk (s)']];
/** The operations of a session in `status`, as [path, button label]. */
const operationsOf = (status) => ({ paused: [['resume', 'Run'], ['stop', 'Stop']], running: [['pause', 'Pause'], ['stop', 'Stop']] })[status] ?? [];
const ENDED = ['completed', 'busy', 'no-answer', 'failed', 'canceled'];

/** The script with `{{field}}` filled from the contact (`{{ first_name }}` too); an unknown field stays empty. */
const scriptFor = (script, contact) => (script ?? '').replace(/\{\{\s*([a-z_]+)\s*\}\}/g, (_, name) => String(contact?.[name] ?? ''));
const nameOf = (contact) => contact?.name || [contact?.first_name, contact?.last_name].filter(Boolean).join(' ') || contact?.phone || '';

function Sessions() {
  const [rows, setRows] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => void api('/v1/voice/dialer/sessions?limit=100').then((b) => setRows(b.data), setError), []);
  return html`
    <${Heading}>Dialer</${Heading}>
    <${ErrorMessage} error=${error} />
    ${rows && (rows.length === 0 ? html`<p>No dialer sessions yet: create one with POST /v1/voice/dialer/sessions.</p>` : html`<table>
      <thead><tr><th scope="col">Session</th><th scope="col">Status</th><th scope="col">Lines</th><th scope="col">Created</th></tr></thead>
      <tbody>${rows.map((s) => html`<tr><th scope="row"><a href=${`#/dialer/${s.id}`}>${s.id}</a></th><td><${State} value=${s.status} /></td><td>${s.parallel_lines}</td><td><${DateTime} seconds=${s.created_at} /></td></tr>`)}</tbody>
    </table>`)}`;
}

function Disposition({ call, onDone }) {
  const [disposition, setDisposition] = useState('connected');
  const [notes, setNotes] = useState('');
  const [error, setError] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    try {
      await api(`/v1/voice/calls/${call.id}/disposition`, { method: 'POST', body: { disposition, ...(notes ? { notes } : {}) } });
      onDone(`Recorded ${disposition.replaceAll('_', ' ')} for the call to ${call.to_number}.`);
    } catch (err) {
      setError(err);
    }
  };
  return html`<form onSubmit=${submit} aria-labelledby="disposition-title">
    <h2 id="disposition-title">Disposition of the call to ${call.to_number}</h2>
    <label for="disposition">Disposition</label>
    <select id="disposition" value=${disposition} onChange=${(e) => setDisposition(e.target.value)}>${DISPOSITIONS.map((d) => html`<option value=${d}>${d.replaceAll('_', ' ')}</option>`)}</select>
    <label for="disposition-notes">Notes</label>
    <textarea id="disposition-notes" rows="3" maxlength="10000" value=${notes} onInput=${(e) => setNotes(e.target.value)} />
    <button type="submit">Save disposition</button>
    <${ErrorMessage} error=${error} />
  </form>`;
}

function Session({ id }) {
  const [view, setView] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const [tick, setTick] = useState(0);
  const load = async () => {
    const session = (await api(`/v1/voice/dialer/sessions/${id}`)).data;
    const [stats, agent, calls] = await Promise.all([
      api(`/v1/voice/dialer/sessions/${id}/stats`), api(`/v1/voice/agents/${session.agent_id}`), api(`/v1/voice/calls?session_id=${id}&limit=20`),
    ]);
    const current = agent.data.current_call_id ? calls.data.find((c) => c.id === agent.data.current_call_id) : undefined;
    const waiting = calls.data.find((c) => ENDED.includes(c.status) && c.answered_at && !c.disposition);
    const shown = current ?? waiting;
    const contact = shown?.contact_id ? (await api(`/v1/contacts/${shown.contact_id}`)).data : undefined;
    setView({ session, stats: stats.data, agent: agent.data, current, waiting, contact });
  };
  useEffect(() => void load().catch(setError), [tick]);
  useEffect(() => {
    if (view?.session.status !== 'running' && !view?.current) return undefined;
    const timer = setTimeout(() => setTick((n) => n + 1), POLL_MS);
    return () => clearTimeout(timer);
  }, [view]);
  const operate = async (path) => {
    setError(null);
    try {
      const moved = (await api(`/v1/voice/dialer/sessions/${id}/${path}`, { method: 'POST' })).data;
      setNotice(`The session is ${moved.status}.`);
      setTick((n) => n + 1);
    } catch (e) {
      setError(e);
    }
  };
  if (!view) return html`<${Heading}>Dialer session</${Heading}><${ErrorMessage} error=${error} />`;
  const { session, stats, agent, current, waiting, contact } = view;
  return html`
    <${Heading}>Dialer session</${Heading}>
    <p><a href="#/dialer">All sessions</a> · <code>${session.id}</code> · Status <${State} value=${session.status} /> · Agent <${State} value=${agent.status} /></p>
    <div class="actions">${operationsOf(session.status).map(([path, label]) => html`<button type="button" onClick=${() => operate(path)}>${label}</button>`)}</div>
    <p role="status">${notice}</p>
    <${ErrorMessage} error=${error} />
    <dl class="counts">${STATS.map(([key, label]) => html`<div><dt>${label}</dt><dd>${stats[key]}</dd></div>`)}</dl>
    <section aria-labelledby="current-title">
      <h2 id="current-title">Current call</h2>
      ${current ? html`<p><strong>${nameOf(contact)}</strong> · ${current.to_number} · <${State} value=${current.status} /></p>
        <h3>Script</h3><p class="script">${scriptFor(session.script, contact)}</p>` : html`<p>No call is connected: ${session.status === 'running' ? 'waiting for the next one.' : `the session is ${session.status}.`}</p>`}
    </section>
    ${!current && waiting && html`<${Disposition} key=${waiting.id} call=${waiting} onDone=${(text) => { setNotice(text); setTick((n) => n + 1); }} />`}`;
}

/** `#/dialer` lists the sessions, `#/dialer/<id>` works one. */
export const Dialer = ({ id }) => (id ? html`<${Session} id=${id} />` : html`<${Sessions} />`);
