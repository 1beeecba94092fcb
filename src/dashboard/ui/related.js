// What a record's page shows beside its fields: the timeline of a contact, company or deal, and the
// members of a list.
import { api, query } from './api.js';
import { DateTime, ErrorMessage, Pager } from './common.js';
import { html, useEffect, useState } from './html.js';

const PAGE_SIZE = 25;

export function Timeline({ resource, id }) {
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
          <span class=${`tag tag-${item.type}`}>${item.type.replaceAll('_', ' ')}</span>
          <span class="summary">${item.summary}</span>
          <${DateTime} seconds=${item.occurred_at} />
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

export function ListMembers({ list }) {
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
        <${Pager} label="Pages of members" cursors=${cursors} setCursors=${setCursors} next=${page.next_cursor} />`}
    </section>
  `;
}
