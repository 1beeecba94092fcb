// Campaigns with their audience list (by name) and launch button, and the live feed of events.
import { api, query, streamEvents } from './api.js';
import { DateTime, ErrorMessage, Heading, State } from './common.js';
import { RecordLink } from './fields.js';
import { html, useEffect, useState } from './html.js';

export function Campaigns() {
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const reload = () => api(`/v1/campaigns${query({ limit: 100 })}`).then(setPage, setError);
  useEffect(() => { reload(); }, []);
  const launch = async (campaign) => {
    setError(null);
    try {
      await api(`/v1/campaigns/${campaign.id}/launch`, { method: 'POST' });
      setNotice(`Launched ${campaign.name}.`);
    } catch (e) {
      setError(e);
    }
    reload();
  };
  return html`
    <${Heading}>Campaigns<//>
    <p role="status">${notice}</p>
    <${ErrorMessage} error=${error} />
    ${page && html`<table>
      <thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Audience list</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>
        ${page.data.length === 0 && html`<tr><td colspan="5">No campaigns.</td></tr>`}
        ${page.data.map((c) => html`<tr>
          <th scope="row">${c.name}</th>
          <td><${State} value=${c.status} /></td>
          <td>${c.list_id ? html`<${RecordLink} resource="lists" id=${c.list_id} />` : '—'}</td>
          <td><${DateTime} seconds=${c.created_at} /></td>
          <td>${c.status === 'draft' && html`<button type="button" onClick=${() => launch(c)} aria-label=${`Launch ${c.name}`}>Launch</button>`}</td>
        </tr>`)}
      </tbody>
    </table>`}
  `;
}

const FEED_SIZE = 100;

/** The latest events, then every new one as it is recorded, newest on top. */
export function LiveEvents() {
  const [events, setEvents] = useState([]);
  const [state, setState] = useState('connecting');
  const [error, setError] = useState(null);
  useEffect(() => {
    const controller = new AbortController();
    const add = (incoming) => setEvents((before) => {
      const seen = new Set(before.map((e) => e.id));
      return [...incoming.filter((e) => !seen.has(e.id)), ...before].slice(0, FEED_SIZE);
    });
    api(`/v1/events${query({ limit: 20 })}`, { signal: controller.signal }).then((page) => add(page.data), (e) => { if (!controller.signal.aborted) setError(e); });
    streamEvents((event) => add([event]), setState, controller.signal);
    return () => controller.abort();
  }, []);
  return html`
    <${Heading}>Live events<//>
    <p class=${`stream stream-${state}`}>Stream: ${state === 'live' ? 'connected, new events appear on top' : state}</p>
    <${ErrorMessage} error=${error} />
    <ol class="events" role="log" aria-label="Events, newest first">
      ${events.map((e) => html`<li>
        <code class="event-type">${e.type}</code>
        <span>${e.data?.object?.name ?? e.data?.object?.id ?? ''}</span>
        <${DateTime} seconds=${e.created_at} />
      </li>`)}
    </ol>
  `;
}
