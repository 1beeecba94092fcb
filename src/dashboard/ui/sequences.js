// What a record's page of the sequences group shows beside its details: a sequence's status with its
// counts and the lifecycle operations its status allows (followed each second while a background
// job works a transitional state), its steps in order with their analytics, and its enrollments with
// pause, resume and finish; and on a contact's page, the contact's enrollments in every sequence.
import { api, query } from './api.js';
import { DateTime, ErrorMessage, Pager, State } from './common.js';
import { RecordLink } from './fields.js';
import { html, useEffect, useState } from './html.js';
import { stateOptions } from './resources.js';

const PAGE_SIZE = 25;
/** States a background job moves on: the page reads the sequence again until it leaves them. */
const WORKING = ['scheduling', 'pausing', 'resuming', 'terminating'];
const POLL_MS = 1000;
/** Enrollments still on their way. */
const OPEN = ['pending', 'active', 'paused'];

/** The operations of a sequence in `status`, as [path, button label, what to say once asked]. */
function operationsOf(status) {
  const ops = [];
  if (status === 'drafted') ops.push(['run', 'Run', 'Running: its enrollments are being scheduled.']);
  if (status === 'live') ops.push(['pause', 'Pause', 'Pausing: nothing more is sent.']);
  if (status === 'paused') ops.push(['resume', 'Resume', 'Resuming: the steps that fell due are spread from now.']);
  return ops;
}
const TERMINABLE = ['live', 'paused'];

const COUNTS = [['enrolled', 'Enrolled'], ['active', 'Active'], ['finished', 'Finished'], ['replied', 'Replied'], ['bounced', 'Bounced']];
const METRICS = [['sent', 'Sent'], ['delivered', 'Delivered'], ['opened', 'Opened'], ['clicked', 'Clicked'], ['replied', 'Replied'], ['bounced', 'Bounced'], ['unsubscribed', 'Unsubscribed']];
const UNITS = [[86_400, 'day'], [3_600, 'hour'], [60, 'minute'], [1, 'second']];

/** A step's wait in words: "2 days", "90 minutes", "None". */
function duration(seconds) {
  if (!seconds) return 'None';
  const [size, unit] = UNITS.find(([s]) => seconds % s === 0);
  const n = seconds / size;
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** A step's place for a person: the next one while the enrollment is open, the steps done after. */
const currentStep = (e) => (OPEN.includes(e.status) ? `Step ${e.step_index + 1}` : `${e.step_index} done`);

function Lifecycle({ record, onChange, onRefresh }) {
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const [terminating, setTerminating] = useState(false);
  const path = `/v1/sequences/${record.id}`;
  const working = WORKING.includes(record.status);
  useEffect(() => {
    if (!working) return undefined;
    const timer = setTimeout(() => api(path).then((body) => {
      onChange(body.data);
      if (!WORKING.includes(body.data.status)) setNotice(`Done: the sequence is ${body.data.status}.`);
    }, setError), POLL_MS);
    return () => clearTimeout(timer);
  }, [record]);
  const run = async (op, done) => {
    setError(null);
    setTerminating(false);
    try {
      onChange((await api(`${path}/${op}`, { method: 'POST' })).data);
      setNotice(done);
    } catch (e) {
      setError(e);
    }
  };
  return html`<section aria-labelledby="lifecycle-title">
    <h2 id="lifecycle-title">Sequence</h2>
    <p>Status <${State} value=${record.status} /> ${working && html`<span class="hint">being worked in the background; this page follows it</span>`}</p>
    <dl class="stats" aria-label="Enrollments by state">${COUNTS.map(([key, label]) => html`<div><dt>${label}</dt><dd>${record.counts?.[key] ?? 0}</dd></div>`)}</dl>
    <div class="actions">
      ${operationsOf(record.status).map(([op, label, done]) => html`<button type="button" onClick=${() => run(op, done)}>${label}</button>`)}
      ${TERMINABLE.includes(record.status) && (terminating
        ? html`<button type="button" class="danger" onClick=${() => run('terminate', 'Terminating: its open enrollments are being finished.')}>Confirm terminate</button>
          <button type="button" onClick=${() => setTerminating(false)}>Cancel</button>`
        : html`<button type="button" onClick=${() => setTerminating(true)}>Terminate</button>`)}
      <button type="button" onClick=${onRefresh}>Refresh</button>
    </div>
    <p role="status">${notice}</p>
    <${ErrorMessage} error=${error} />
  </section>`;
}

/** The steps in order, each with what became of its messages. */
function Steps({ sequence, version }) {
  const [steps, setSteps] = useState(null);
  const [analytics, setAnalytics] = useState(new Map());
  const [error, setError] = useState(null);
  const path = `/v1/sequences/${sequence.id}`;
  useEffect(() => {
    Promise.all([api(`${path}/steps${query({ limit: 50 })}`), api(`${path}/analytics`)]).then(([page, body]) => {
      setSteps(page.data);
      setAnalytics(new Map(body.data.steps.map((s) => [s.step_id, s])));
      setError(null);
    }, setError);
  }, [sequence.id, version]);
  return html`<section class="wide" aria-labelledby="steps-title">
    <h2 id="steps-title">Steps ${steps && html`<span class="count">(${steps.length})</span>`}</h2>
    <${ErrorMessage} error=${error} />
    ${steps && html`<table aria-label="Steps and their analytics">
      <thead><tr><th scope="col">Step</th><th scope="col">Type</th><th scope="col">Wait before</th><th scope="col">Subject</th>
        ${METRICS.map(([, label]) => html`<th scope="col">${label}</th>`)}</tr></thead>
      <tbody>
        ${steps.length === 0 && html`<tr><td colspan=${4 + METRICS.length}>No steps yet: a sequence needs one to run.</td></tr>`}
        ${steps.map((step) => html`<tr>
          <th scope="row">${step.step_order}</th>
          <td>${step.step_type === 'EMAIL' ? 'E-mail' : step.step_type}${step.input_type === 'ON_DEMAND' ? ' (by hand)' : ''}</td>
          <td>${duration(step.time_interval)}</td>
          <td>${step.subject || (step.step_type === 'EMAIL' && step.step_order > 1 && sequence.send_in_same_thread ? html`<span class="hint">Re: the first e-mail</span>` : '—')}</td>
          ${METRICS.map(([key]) => html`<td>${analytics.get(step.id)?.[key] ?? 0}</td>`)}
        </tr>`)}
      </tbody>
    </table>`}
  </section>`;
}

const MOVES = { paused: 'Paused.', active: 'Resumed.', finished: 'Finished.' };

/**
 * A page of enrollments (of a sequence, or of a contact: `link` says which record each row names),
 * filtered by status, each with the moves its state allows.
 */
function Enrollments({ path, link, version, onMoved }) {
  const [status, setStatus] = useState('');
  const [cursors, setCursors] = useState(['']);
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const [finishing, setFinishing] = useState(null);
  const cursor = cursors[cursors.length - 1];
  useEffect(() => {
    api(`${path}${query({ status, limit: PAGE_SIZE, cursor })}`).then((body) => { setPage(body); setError(null); }, setError);
  }, [path, status, cursor, version]);
  const move = async (enrollment, to) => {
    setError(null);
    setFinishing(null);
    try {
      const moved = (await api(`/v1/enrollments/${enrollment.id}`, { method: 'PATCH', body: { status: to } })).data;
      setPage((before) => ({ ...before, data: before.data.map((e) => (e.id === moved.id ? moved : e)) }));
      setNotice(MOVES[to]);
      onMoved?.();
    } catch (e) {
      setError(e);
    }
  };
  const choose = (value) => {
    setStatus(value);
    setCursors(['']);
  };
  const actionsOf = (e) => html`
    ${['pending', 'active'].includes(e.status) && html`<button type="button" onClick=${() => move(e, 'paused')}>Pause</button>`}
    ${e.status === 'paused' && html`<button type="button" onClick=${() => move(e, 'active')}>Resume</button>`}
    ${OPEN.includes(e.status) && (finishing === e.id
      ? html`<button type="button" class="danger" onClick=${() => move(e, 'finished')}>Confirm finish</button> <button type="button" onClick=${() => setFinishing(null)}>Cancel</button>`
      : html`<button type="button" onClick=${() => setFinishing(e.id)}>Finish</button>`)}`;
  return html`<section class="wide" aria-labelledby="enrollments-title">
    <h2 id="enrollments-title">Enrollments ${page && html`<span class="count">(${page.pagination.total})</span>`}</h2>
    <form class="toolbar" aria-label="Filter enrollments" onSubmit=${(e) => e.preventDefault()}>
      <span class="filter"><label for="enrollment-status">Enrollment status</label>
        <select id="enrollment-status" value=${status} onChange=${(e) => choose(e.target.value)}>
          <option value="">All</option>
          ${stateOptions([...OPEN, 'finished', 'failed']).map(([s, label]) => html`<option value=${s}>${label}</option>`)}
        </select></span>
    </form>
    <p role="status">${notice}</p>
    <${ErrorMessage} error=${error} />
    ${page && html`
      <table aria-label="Enrollments">
        <thead><tr><th scope="col">${link === 'contacts' ? 'Contact' : 'Sequence'}</th><th scope="col">Status</th><th scope="col">Reason</th>
          <th scope="col">Current step</th><th scope="col">Next due</th><th scope="col">Last sent</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>
          ${page.data.length === 0 && html`<tr><td colspan="7">No enrollments${status ? ` ${status}` : ''}.</td></tr>`}
          ${page.data.map((e) => html`<tr>
            <th scope="row"><${RecordLink} resource=${link} id=${link === 'contacts' ? e.contact_id : e.sequence_id} /></th>
            <td><${State} value=${e.status} /></td>
            <td>${e.reason ?? e.error ?? '—'}</td>
            <td>${currentStep(e)}</td>
            <td>${e.paused_until ? html`<span class="hint">back</span> <${DateTime} seconds=${e.paused_until} />` : html`<${DateTime} seconds=${e.due_at} />`}</td>
            <td><${DateTime} seconds=${e.last_sent_at} /></td>
            <td><div class="actions">${actionsOf(e)}</div></td>
          </tr>`)}
        </tbody>
      </table>
      <${Pager} label="Pages of enrollments" cursors=${cursors} setCursors=${setCursors} next=${page.next_cursor} total=${page.pagination.total} />`}
  </section>`;
}

function Sequence({ record, onChange }) {
  // Each refresh, and each state the sequence settles in, reads its steps and enrollments again.
  const [refreshes, setRefreshes] = useState(0);
  const [error, setError] = useState(null);
  const reread = () => api(`/v1/sequences/${record.id}`).then((body) => { onChange(body.data); setError(null); }, setError);
  const refresh = () => reread().then(() => setRefreshes((n) => n + 1));
  const version = `${record.status}:${refreshes}`;
  return html`
    <${Lifecycle} record=${record} onChange=${onChange} onRefresh=${refresh} />
    <${ErrorMessage} error=${error} />
    <${Steps} sequence=${record} version=${version} />
    <${Enrollments} path=${`/v1/sequences/${record.id}/enrollments`} link="contacts" version=${version} onMoved=${reread} />
  `;
}

/** The sequences section of a record's page, if its resource has one. */
export function SequenceSections({ resource, record, onChange }) {
  switch (resource) {
    case 'sequences': return html`<${Sequence} record=${record} onChange=${onChange} />`;
    case 'contacts': return html`<${Enrollments} path=${`/v1/contacts/${record.id}/enrollments`} link="sequences" />`;
    default: return null;
  }
}
