// The record screens of every resource of resources.js: a table paged by cursor with its search and
// filters and a "New …" form, and a record's page (its fields, its actions, and what it has beside
// them). Searching uses `POST /v1/search/<resource>` (full text, the filters as its conditions);
// listing `GET /v1/<resource>` (the filters as query parameters).
import { api, query } from './api.js';
import { DateTime, ErrorMessage, Heading, Pager, show } from './common.js';
import { Fields } from './fields.js';
import { EmailSections } from './email.js';
import { CreateForm } from './forms.js';
import { html, useEffect, useState } from './html.js';
import { QuoteSections } from './quotes.js';
import { ListMembers, Timeline } from './related.js';
import { HAS_TIMELINE, RESOURCES } from './resources.js';
import { SequenceSections } from './sequences.js';

export { RESOURCES };

const PAGE_SIZE = 25;

/** The filters chosen, each with the value of its option (a string, number or boolean). */
const chosenFilters = (spec, selected) => (spec.filters ?? [])
  .filter((f) => selected[f.param])
  .map((f) => [f, f.options.find(([v]) => String(v) === selected[f.param])[0]]);

function load(resource, search, chosen, cursor, signal) {
  // A list with a text filter of its own (the inbox's `q`) searches through it.
  const param = RESOURCES[resource].searchParam;
  if (search && param) return api(`/v1/${resource}${query({ limit: PAGE_SIZE, cursor, [param]: search, ...Object.fromEntries(chosen.map(([f, v]) => [f.param, v])) })}`, { signal });
  if (search) {
    const conditions = chosen.flatMap(([f, v]) => (f.conditions ? f.conditions(v) : [{ field: f.param, operator: 'eq', value: v }]));
    const body = { q: search, limit: PAGE_SIZE, ...(conditions.length ? { filters: conditions } : {}), ...(cursor ? { cursor } : {}) };
    return api(`/v1/search/${resource}`, { method: 'POST', body, signal });
  }
  return api(`/v1/${resource}${query({ limit: PAGE_SIZE, cursor, ...Object.fromEntries(chosen.map(([f, v]) => [f.param, v])) })}`, { signal });
}

export function RecordTable({ resource }) {
  const spec = RESOURCES[resource];
  const [text, setText] = useState('');
  const [search, setSearch] = useState('');
  const [selected, setSelected] = useState({});
  // The cursors of the pages walked so far: the last one is the page shown ('' is the first).
  const [cursors, setCursors] = useState(['']);
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    const controller = new AbortController();
    load(resource, search, chosenFilters(spec, selected), cursor, controller.signal)
      .then((body) => { setPage(body); setError(null); }, (e) => { if (!controller.signal.aborted) setError(e); });
    return () => controller.abort();
  }, [resource, search, selected, cursor]);

  const submit = (event) => {
    event.preventDefault();
    setSearch(text.trim());
    setCursors(['']);
  };
  const choose = (param, value) => {
    setSelected((before) => ({ ...before, [param]: value }));
    setCursors(['']);
  };
  const label = `Search ${spec.title.toLowerCase()}`;
  const [linkField, , linkRender] = spec.columns[0];
  return html`
    <${Heading}>${spec.title}<//>
    ${spec.create && html`<${CreateForm} resource=${resource} spec=${spec} onCreated=${(r) => { location.hash = `#/${resource}/${r.id}`; }} />`}
    <form class="toolbar" role="search" onSubmit=${submit} aria-label=${spec.title}>
      ${spec.search && html`
        <label for="search">${label}</label>
        <input id="search" type="search" value=${text} onInput=${(e) => setText(e.target.value)} placeholder=${spec.search} />
        <button type="submit">Search</button>`}
      ${(spec.filters ?? []).map((f) => html`<span class="filter">
        <label for=${`filter-${f.param}`}>${f.label}</label>
        <select id=${`filter-${f.param}`} value=${selected[f.param] ?? ''} onChange=${(e) => choose(f.param, e.target.value)}>
          <option value="">All</option>
          ${f.options.map(([v, optionLabel]) => html`<option value=${String(v)}>${optionLabel}</option>`)}
        </select></span>`)}
    </form>
    <${ErrorMessage} error=${error} />
    ${page && html`
      <table>
        <caption class="visually-hidden">${spec.title}${search ? ` matching “${search}”` : ''}</caption>
        <thead><tr>${spec.columns.map(([, title]) => html`<th scope="col">${title}</th>`)}<th scope="col">Created</th></tr></thead>
        <tbody>
          ${page.data.length === 0 && html`<tr><td colspan=${spec.columns.length + 1}>Nothing found.</td></tr>`}
          ${page.data.map((row) => html`<tr>
            <th scope="row"><a href=${`#/${resource}/${row.id}`}>${linkRender ? linkRender(row) : show(row[linkField]) === '—' ? row.id : row[linkField]}</a></th>
            ${spec.columns.slice(1).map(([field, , render]) => html`<td>${render ? render(row) : show(row[field])}</td>`)}
            <td><${DateTime} seconds=${row.created_at} /></td>
          </tr>`)}
        </tbody>
      </table>
      <${Pager} label="Pages" cursors=${cursors} setCursors=${setCursors} next=${page.next_cursor} total=${page.pagination.total} />`}
  `;
}

/** What a record's page leaves out of its details because it shows it elsewhere. */
const SHOWN_ELSEWHERE = {
  quotes: ['title', 'number', 'status', 'line_items', 'subtotal', 'discount_total', 'tax_total', 'total', 'public_token'],
  tasks: ['title'],
  domains: ['domain', 'records'], inbox: ['messages'], outbox: ['text', 'html'],
  sequences: ['status', 'counts'],
};

/**
 * One record's fields and actions, with its timeline, a list's members, a quote's lines, a sequence's
 * steps and enrollments or a contact's enrollments.
 */
export function RecordPage({ resource, id }) {
  const spec = RESOURCES[resource];
  const [record, setRecord] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const path = `/v1/${resource}/${encodeURIComponent(id)}`;
  useEffect(() => {
    api(path).then((body) => setRecord(body.data), setError);
  }, [resource, id]);
  if (!record) return error ? html`<${Heading}>${spec.title}<//><${ErrorMessage} error=${error} />` : html`<p>Loading…</p>`;

  const act = async (body, done) => {
    setError(null);
    try {
      setRecord((await api(path, { method: 'PATCH', body })).data);
      setNotice(done);
    } catch (e) {
      setError(e);
    }
  };
  const title = spec.heading ? spec.heading(record) : record.name || record.id;
  return html`
    <p><a href=${`#/${resource}`}>← ${spec.title}</a></p>
    <${Heading}>${title}<//>
    <p class="record-id">ID <code>${record.id}</code></p>
    ${spec.actions && html`<div class="actions">${spec.actions(record).map(([label, body, done]) => html`<button type="button" onClick=${() => act(body, done)}>${label}</button>`)}</div>`}
    <p role="status">${notice}</p>
    <${ErrorMessage} error=${error} />
    <div class="columns">
      <section aria-labelledby="fields-title">
        <h2 id="fields-title">Details</h2>
        <${Fields} record=${record} omit=${['id', 'name', ...(SHOWN_ELSEWHERE[resource] ?? [])]} />
      </section>
      ${HAS_TIMELINE.has(resource) && html`<${Timeline} resource=${resource} id=${id} />`}
      ${resource === 'lists' && html`<${ListMembers} list=${record} />`}
      ${resource === 'quotes' && html`<${QuoteSections} quote=${record} onChange=${setRecord} />`}
      <${EmailSections} resource=${resource} record=${record} onChange=${setRecord} />
      <${SequenceSections} resource=${resource} record=${record} onChange=${setRecord} />
    </div>
  `;
}
