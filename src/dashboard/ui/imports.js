// CSV imports: upload a file of contacts or companies, then follow every import's progress until it
// ends (polled while one is queued or running), read a finished import's row errors, cancel one.
import { api, query } from './api.js';
import { ErrorMessage, formatTime, Heading } from './common.js';
import { html, useEffect, useState } from './html.js';

const ACTIVE = new Set(['queued', 'running']);
const POLL_MS = 1000;

export function Imports() {
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  const [shown, setShown] = useState('');
  const reload = () => api(`/v1/imports${query({ limit: 20 })}`).then(setPage, setError);
  useEffect(() => { reload(); }, []);
  // Follow the imports still at work; stop once all have ended.
  const working = page?.data.some((i) => ACTIVE.has(i.status));
  useEffect(() => {
    if (!working) return undefined;
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [working]);
  const cancel = (item) => api(`/v1/imports/${item.id}/cancel`, { method: 'POST' }).then(reload, setError);
  return html`
    <${Heading}>Imports<//>
    <${ImportForm} onStarted=${reload} />
    <${ErrorMessage} error=${error} />
    ${page && html`<table>
      <thead><tr><th scope="col">File</th><th scope="col">Object</th><th scope="col">Status</th><th scope="col">Progress</th>
        <th scope="col">Created</th><th scope="col">Updated</th><th scope="col">Skipped</th><th scope="col">Failed</th><th scope="col">Started</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>
        ${page.data.length === 0 && html`<tr><td colspan="10">No imports yet.</td></tr>`}
        ${page.data.map((i) => html`<tr>
          <th scope="row">${i.filename ?? i.id}</th><td>${i.object}</td><td><span class=${`state state-${i.status}`}>${i.status.replaceAll('_', ' ')}</span></td>
          <td><progress max=${Math.max(i.rows_total, 1)} value=${i.rows_processed} aria-label=${`Progress of ${i.filename ?? i.id}`}></progress>
            <span class="count">${i.rows_processed} / ${i.rows_total}</span></td>
          <td>${i.created}</td><td>${i.updated}</td><td>${i.skipped}</td><td>${i.failed}</td><td>${formatTime(i.started_at)}</td>
          <td>${ACTIVE.has(i.status) && html`<button type="button" onClick=${() => cancel(i)} aria-label=${`Cancel import of ${i.filename ?? i.id}`}>Cancel</button>`}
            ${i.failed > 0 && html`<button type="button" onClick=${() => setShown(i.id)} aria-label=${`Show the errors of ${i.filename ?? i.id}`}>Errors</button>`}</td>
        </tr>`)}
      </tbody>
    </table>`}
    ${shown && html`<${ImportErrors} key=${shown} id=${shown} />`}
  `;
}

/** The upload form: the file, what its rows are, how they are written and the list they go on. */
function ImportForm({ onStarted }) {
  const [object, setObject] = useState('contacts');
  const [lists, setLists] = useState([]);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState('');
  const listType = object === 'contacts' ? 'contacts' : 'companies';
  useEffect(() => {
    api(`/v1/lists${query({ limit: 100, type: listType })}`).then((p) => setLists(p.data), setError);
  }, [listType]);
  const submit = async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    setBusy(true);
    setError(null);
    setNotice('');
    try {
      const body = new FormData(form);
      if (!body.get('list_id')) body.delete('list_id');
      const started = (await api('/v1/imports', { method: 'POST', body })).data;
      setNotice(`Import of ${started.filename} started: ${started.rows_total} rows.`);
      form.reset();
      setObject('contacts');
      onStarted();
    } catch (e) {
      setError(e);
    }
    setBusy(false);
  };
  return html`
    <form class="inline-form" onSubmit=${submit} aria-label="New import">
      <label for="import-file">CSV file</label>
      <input id="import-file" name="file" type="file" accept=".csv,text/csv,text/plain" required />
      <label for="import-object">Records</label>
      <select id="import-object" name="object" value=${object} onChange=${(e) => setObject(e.target.value)}>
        <option value="contacts">Contacts</option><option value="companies">Companies</option>
      </select>
      <label for="import-mode">Rows</label>
      <select id="import-mode" name="mode">
        <option value="create">create</option><option value="upsert">create or update</option><option value="update">update only</option>
      </select>
      <label for="import-list">List</label>
      <select id="import-list" name="list_id" required=${object === 'contacts'}>
        <option value="">${object === 'contacts' ? 'Choose a list' : 'No list'}</option>
        ${lists.map((l) => html`<option value=${l.id}>${l.name}</option>`)}
      </select>
      <button type="submit" disabled=${busy}>Import</button>
    </form>
    <p class="hint">Columns are matched to fields by their headers (Email, First Name, Job Title, a custom field's name…). "Create or update" matches contacts by e-mail, then LinkedIn URL, and companies by domain.</p>
    <p role="status">${notice}</p>
    <${ErrorMessage} error=${error} />
  `;
}

function ImportErrors({ id }) {
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => { api(`/v1/imports/${id}/errors${query({ limit: 100 })}`).then(setPage, setError); }, [id]);
  return html`
    <section aria-labelledby="import-errors-title">
      <h2 id="import-errors-title">Rows refused ${page && html`<span class="count">(${page.pagination.total})</span>`}</h2>
      <${ErrorMessage} error=${error} />
      ${page && html`<table>
        <thead><tr><th scope="col">Row</th><th scope="col">Column</th><th scope="col">Why</th></tr></thead>
        <tbody>${page.data.map((e) => html`<tr><th scope="row">${e.row}</th><td>${e.column ?? '—'}</td><td>${e.message}</td></tr>`)}</tbody>
      </table>`}
    </section>
  `;
}
