// Contacts, companies, deals and lists: searchable tables paged by cursor, and record pages with
// their timelines. Searching uses `POST /v1/search/<resource>` (full text); listing `GET /v1/<resource>`.
import { api, query } from './api.js';
import { ErrorMessage, formatMoney, formatTime, Heading, show } from './common.js';
import { html, useEffect, useState } from './html.js';

const PAGE_SIZE = 25;

/** What each table shows; the first column links to the record. */
export const RESOURCES = {
  contacts: { title: 'Contacts', search: true, columns: [['name', 'Name'], ['title', 'Title'], ['company', 'Company'], ['work_email', 'Work e-mail']] },
  companies: { title: 'Companies', search: true, columns: [['name', 'Name'], ['domain', 'Domain'], ['industry', 'Industry'], ['country', 'Country']] },
  deals: { title: 'Deals', search: true, columns: [['name', 'Name'], ['amount', 'Amount', (d) => formatMoney(d.amount, d.currency)], ['status', 'Status'], ['owner', 'Owner']] },
  lists: { title: 'Lists', search: false, columns: [['name', 'Name'], ['type', 'Type'], ['member_count', 'Members']] },
};
const LIST_TYPES = ['contacts', 'companies', 'suppressions', 'deals', 'leads'];
const HAS_TIMELINE = new Set(['contacts', 'companies', 'deals']);

export function RecordTable({ resource }) {
  const spec = RESOURCES[resource];
  const [text, setText] = useState('');
  const [search, setSearch] = useState('');
  // The cursors of the pages walked so far: the last one is the page shown ('' is the first).
  const [cursors, setCursors] = useState(['']);
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    const controller = new AbortController();
    const load = search && spec.search
      ? api(`/v1/search/${resource}`, { method: 'POST', body: { q: search, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }, signal: controller.signal })
      : api(`/v1/${resource}${query({ limit: PAGE_SIZE, cursor, type: spec.search ? undefined : search })}`, { signal: controller.signal });
    load.then((body) => { setPage(body); setError(null); }, (e) => { if (!controller.signal.aborted) setError(e); });
    return () => controller.abort();
  }, [resource, search, cursor]);

  const submit = (event) => {
    event.preventDefault();
    setSearch(text.trim());
    setCursors(['']);
  };
  const label = `Search ${spec.title.toLowerCase()}`;
  return html`
    <${Heading}>${spec.title}<//>
    <form class="toolbar" role="search" onSubmit=${submit}>
      ${spec.search ? html`
        <label for="search">${label}</label>
        <input id="search" type="search" value=${text} onInput=${(e) => setText(e.target.value)} placeholder="Words that begin a name, title, e-mail…" />
        <button type="submit">Search</button>` : html`
        <label for="type">List type</label>
        <select id="type" value=${text} onChange=${(e) => { setText(e.target.value); setSearch(e.target.value); setCursors(['']); }}>
          <option value="">All types</option>
          ${LIST_TYPES.map((t) => html`<option value=${t}>${t}</option>`)}
        </select>`}
    </form>
    <${ErrorMessage} error=${error} />
    ${page && html`
      <table>
        <caption class="visually-hidden">${spec.title}${search ? ` matching “${search}”` : ''}</caption>
        <thead><tr>${spec.columns.map(([, title]) => html`<th scope="col">${title}</th>`)}<th scope="col">Created</th></tr></thead>
        <tbody>
          ${page.data.length === 0 && html`<tr><td colspan=${spec.columns.length + 1}>Nothing found.</td></tr>`}
          ${page.data.map((row) => html`<tr>
            ${spec.columns.map(([field, , render], i) => (i === 0
              ? html`<th scope="row"><a href=${`#/${resource}/${row.id}`}>${show(row[field]) === '—' ? row.id : row[field]}</a></th>`
              : html`<td>${render ? render(row) : show(row[field])}</td>`))}
            <td>${formatTime(row.created_at)}</td>
          </tr>`)}
        </tbody>
      </table>
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled=${cursors.length === 1} onClick=${() => setCursors(cursors.slice(0, -1))}>Previous page</button>
        <span>Page ${cursors.length} · ${page.pagination.total} in all</span>
        <button type="button" disabled=${!page.next_cursor} onClick=${() => setCursors([...cursors, page.next_cursor])}>Next page</button>
      </nav>`}
  `;
}

/** One record's fields, and its timeline for contacts, companies and deals. */
export function RecordPage({ resource, id }) {
  const spec = RESOURCES[resource];
  const [record, setRecord] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    api(`/v1/${resource}/${encodeURIComponent(id)}`).then((body) => setRecord(body.data), setError);
  }, [resource, id]);
  if (error) return html`<${Heading}>${spec.title}<//><${ErrorMessage} error=${error} />`;
  if (!record) return html`<p>Loading…</p>`;
  const fields = Object.entries(record).filter(([name]) => name !== 'name');
  return html`
    <p><a href=${`#/${resource}`}>← ${spec.title}</a></p>
    <${Heading}>${record.name || record.id}<//>
    <div class="columns">
      <section aria-labelledby="fields-title">
        <h2 id="fields-title">Details</h2>
        <dl class="fields">${fields.map(([name, value]) => html`<dt>${name}</dt><dd>${show(value)}</dd>`)}</dl>
      </section>
      ${HAS_TIMELINE.has(resource) && html`<${Timeline} resource=${resource} id=${id} />`}
      ${resource === 'lists' && html`<${ListMembers} list=${record} />`}
    </div>
  `;
}

function Timeline({ resource, id }) {
  const [items, setItems] = useState([]);
  const [next, setNext] = useState(null);
  const [total, setTotal] = useState(null);
  const [error, setError] = useState(null);
  const load = (cursor) => api(`/v1/${resource}/${encodeURIComponent(id)}/timeline${query({ limit: 20, cursor })}`).then((body) => {
    setItems((before) => (cursor ? [...before, ...body.data] : body.data));
    setNext(body.next_cursor);
    setTotal(body.pagination.total);
  }, setError);
  useEffect(() => { load(undefined); }, [resource, id]);
  return html`
    <section aria-labelledby="timeline-title">
      <h2 id="timeline-title">Timeline ${total !== null && html`<span class="count">(${total})</span>`}</h2>
      <${ErrorMessage} error=${error} />
      <ol class="timeline">
        ${items.map((item) => html`<li>
          <span class=${`tag tag-${item.type}`}>${item.type.replace('_', ' ')}</span>
          <span class="summary">${item.summary}</span>
          <time datetime=${new Date(item.occurred_at * 1000).toISOString()}>${formatTime(item.occurred_at)}</time>
        </li>`)}
      </ol>
      ${total === 0 && html`<p>Nothing has happened to this record yet.</p>`}
      ${next && html`<button type="button" onClick=${() => load(next)}>Show more</button>`}
    </section>
  `;
}

/**
 * Where a list's members are read, by its type: contacts and leads lists hold contacts (by their
 * `list_id`), companies and deals lists hold members, suppression lists hold entries.
 */
function membersOf(list) {
  if (list.type === 'contacts' || list.type === 'leads') return { path: '/v1/contacts', params: { list_id: list.id }, link: 'contacts' };
  if (list.type === 'suppressions') return { path: `/v1/lists/${list.id}/entries`, params: {} };
  return { path: `/v1/lists/${list.id}/members`, params: {}, link: list.type };
}

function ListMembers({ list }) {
  const { path, params, link } = membersOf(list);
  const [cursors, setCursors] = useState(['']);
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  const cursor = cursors[cursors.length - 1];
  useEffect(() => {
    api(`${path}${query({ ...params, limit: PAGE_SIZE, cursor })}`).then(setPage, setError);
  }, [list.id, cursor]);
  return html`
    <section aria-labelledby="members-title">
      <h2 id="members-title">${list.type === 'suppressions' ? 'Entries' : 'Members'} ${page && html`<span class="count">(${page.pagination.total})</span>`}</h2>
      <${ErrorMessage} error=${error} />
      ${page && html`
        <ul class="members">
          ${page.data.map((row) => html`<li>${link ? html`<a href=${`#/${link}/${row.id}`}>${row.name || row.id}</a>` : html`<code>${row.value}</code> ${row.kind}`}</li>`)}
        </ul>
        ${page.pagination.total === 0 && html`<p>This list is empty.</p>`}
        <nav class="pager" aria-label="Pages of members">
          <button type="button" disabled=${cursors.length === 1} onClick=${() => setCursors(cursors.slice(0, -1))}>Previous page</button>
          <button type="button" disabled=${!page.next_cursor} onClick=${() => setCursors([...cursors, page.next_cursor])}>Next page</button>
        </nav>`}
    </section>
  `;
}
