// Webhook endpoints and their deliveries, usage, and API keys.
import { api, query } from './api.js';
import { ErrorMessage, formatDate, formatTime, Heading } from './common.js';
import { html, useEffect, useState } from './html.js';

export function Webhooks() {
  const [endpoints, setEndpoints] = useState(null);
  const [selected, setSelected] = useState('');
  const [error, setError] = useState(null);
  useEffect(() => {
    api(`/v1/webhooks${query({ limit: 100 })}`).then((page) => {
      setEndpoints(page.data);
      setSelected(page.data[0]?.id ?? '');
    }, setError);
  }, []);
  return html`
    <${Heading}>Webhooks<//>
    <${ErrorMessage} error=${error} />
    ${endpoints && endpoints.length === 0 && html`<p>No webhook endpoints. Register one with <code>POST /v1/webhooks</code>.</p>`}
    ${endpoints && endpoints.length > 0 && html`
      <table>
        <thead><tr><th scope="col">Endpoint</th><th scope="col">Events</th><th scope="col">Active</th><th scope="col"><span class="visually-hidden">Select</span></th></tr></thead>
        <tbody>${endpoints.map((e) => html`<tr aria-current=${e.id === selected ? 'true' : undefined}>
          <th scope="row">${e.url}</th><td>${e.event_types.join(', ')}</td><td>${e.is_active ? 'yes' : `no${e.disabled_reason ? ` (${e.disabled_reason})` : ''}`}</td>
          <td><button type="button" onClick=${() => setSelected(e.id)} aria-label=${`Show deliveries of ${e.url}`}>Deliveries</button></td>
        </tr>`)}</tbody>
      </table>`}
    ${selected && html`<${Deliveries} endpointId=${selected} />`}
  `;
}

function Deliveries({ endpointId }) {
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const reload = () => api(`/v1/webhooks/${endpointId}/deliveries${query({ limit: 50 })}`).then(setPage, setError);
  useEffect(() => { reload(); }, [endpointId]);
  const redeliver = async (delivery) => {
    try {
      await api(`/v1/webhooks/${endpointId}/deliveries/${delivery.id}/redeliver`, { method: 'POST' });
      setNotice(`Sent ${delivery.event_type} again.`);
      setTimeout(reload, 500);
    } catch (e) {
      setError(e);
    }
  };
  return html`
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <p role="status">${notice}</p>
      <${ErrorMessage} error=${error} />
      ${page && html`<table>
        <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">When</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>
          ${page.data.length === 0 && html`<tr><td colspan="6">No deliveries yet.</td></tr>`}
          ${page.data.map((d) => {
            const last = d.attempts[d.attempts.length - 1];
            return html`<tr>
              <th scope="row">${d.event_type}</th><td><span class=${`state state-${d.status}`}>${d.status}</span></td><td>${d.attempt_count}</td>
              <td>${last ? (last.status_code ?? last.error ?? '—') : '—'}</td><td>${formatTime(d.updated_at)}</td>
              <td><button type="button" onClick=${() => redeliver(d)} aria-label=${`Redeliver ${d.event_type} ${d.id}`}>Redeliver</button></td>
            </tr>`;
          })}
        </tbody>
      </table>`}
    </section>
  `;
}

const DAY = 86400;

/**
 * The balance at the end of each day of the month so far, from this month's ledger entries (newest
 * first): walking back from the current balance undoes each entry.
 */
export function dailyBalances(usage, transactions, now) {
  const days = Math.ceil((Math.min(now, usage.period_end) - usage.period_start) / DAY);
  const balances = new Array(Math.max(days, 1)).fill(usage.balance);
  let balance = usage.balance;
  let t = 0;
  for (let day = balances.length - 1; day >= 0; day--) {
    balances[day] = balance;
    const dayStart = usage.period_start + day * DAY;
    for (; t < transactions.length && transactions[t].created_at >= dayStart; t++) {
      const { type, amount } = transactions[t];
      balance += type === 'debit' ? amount : -amount;
    }
  }
  return balances;
}

function Chart({ balances, daysInMonth }) {
  const width = 720;
  const height = 220;
  const pad = 36;
  const top = Math.max(...balances, 1);
  const x = (day) => pad + (day / Math.max(daysInMonth - 1, 1)) * (width - 2 * pad);
  const y = (value) => height - pad - (value / top) * (height - 2 * pad);
  const points = balances.map((b, day) => `${x(day).toFixed(1)},${y(b).toFixed(1)}`).join(' ');
  const first = balances[0];
  const last = balances[balances.length - 1];
  return html`
    <svg class="chart" viewBox=${`0 0 ${width} ${height}`} role="img" aria-labelledby="chart-title chart-desc">
      <title id="chart-title">Credit balance by day this month</title>
      <desc id="chart-desc">From ${first} credits on day 1 to ${last} credits on day ${balances.length}; the highest is ${top}.</desc>
      <line class="axis" x1=${pad} y1=${height - pad} x2=${width - pad} y2=${height - pad} />
      <line class="axis" x1=${pad} y1=${pad} x2=${pad} y2=${height - pad} />
      <text x=${pad - 6} y=${y(top) + 4} text-anchor="end">${top}</text>
      <text x=${pad - 6} y=${height - pad + 4} text-anchor="end">0</text>
      <text x=${x(0)} y=${height - pad + 18} text-anchor="middle">1</text>
      <text x=${x(daysInMonth - 1)} y=${height - pad + 18} text-anchor="middle">${daysInMonth}</text>
      <polyline class="line" points=${points} />
      ${balances.map((b, day) => html`<circle class="point" cx=${x(day)} cy=${y(b)} r="3"><title>Day ${day + 1}: ${b} credits</title></circle>`)}
    </svg>
  `;
}

export function Usage() {
  const [usage, setUsage] = useState(null);
  const [balances, setBalances] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    (async () => {
      const { data } = await api('/v1/usage');
      // This month's entries, newest first: pages until one reaches before the month.
      const transactions = [];
      let cursor;
      do {
        const page = await api(`/v1/usage/transactions${query({ limit: 200, cursor })}`);
        transactions.push(...page.data.filter((t) => t.created_at >= data.period_start));
        cursor = page.data.some((t) => t.created_at < data.period_start) ? null : page.next_cursor;
      } while (cursor);
      setUsage(data);
      setBalances(dailyBalances(data, transactions, Date.now() / 1000));
    })().catch(setError);
  }, []);
  const daysInMonth = usage ? Math.round((usage.period_end - usage.period_start) / DAY) : 0;
  return html`
    <${Heading}>Usage<//>
    <${ErrorMessage} error=${error} />
    ${usage && html`
      <dl class="stats">
        <div><dt>Balance</dt><dd>${usage.balance}</dd></div>
        <div><dt>Granted this month</dt><dd>${usage.granted}</dd></div>
        <div><dt>Used this month</dt><dd>${usage.debited}</dd></div>
        <div><dt>Refunded this month</dt><dd>${usage.refunded}</dd></div>
      </dl>
      <p>Month of ${formatDate(usage.period_start)} (UTC), ${usage.transactions} ledger entries.</p>
      <${Chart} balances=${balances} daysInMonth=${daysInMonth} />`}
  `;
}

export function ApiKeys({ mode }) {
  const [keys, setKeys] = useState(null);
  const [error, setError] = useState(null);
  const [created, setCreated] = useState(null);
  const [confirming, setConfirming] = useState(null);
  const [notice, setNotice] = useState('');
  const [name, setName] = useState('');
  const [newMode, setNewMode] = useState(mode);
  const reload = () => api('/auth/v1/api-keys').then((body) => setKeys(body.data.keys), setError);
  useEffect(() => { reload(); }, []);

  const create = async (event) => {
    event.preventDefault();
    setError(null);
    try {
      const body = await api('/auth/v1/api-keys', { method: 'POST', body: { name: name.trim(), mode: newMode } });
      setCreated(body.data);
      setName('');
      reload();
    } catch (e) {
      setError(e);
    }
  };
  const revoke = async (key) => {
    setConfirming(null);
    try {
      await api(`/auth/v1/api-keys/${key.api_key_id}`, { method: 'DELETE' });
      setNotice(`Revoked ${key.name}.`);
    } catch (e) {
      setError(e);
    }
    reload();
  };
  return html`
    <${Heading}>API keys<//>
    <form class="inline-form" onSubmit=${create} aria-label="New API key">
      <label for="key-name">Key name</label>
      <input id="key-name" required maxlength="200" value=${name} onInput=${(e) => setName(e.target.value)} />
      <label for="key-mode">Mode</label>
      <select id="key-mode" value=${newMode} onChange=${(e) => setNewMode(e.target.value)}>
        ${mode === 'live' && html`<option value="live">live</option>`}
        <option value="test">test</option>
      </select>
      <button type="submit">Create key</button>
    </form>
    ${created && html`
      <div class="token" role="alert">
        <p><strong>Token of ${created.name}.</strong> Copy it now: it is shown only this once.</p>
        <input readonly aria-label="New API key token" value=${created.api_key_token} onFocus=${(e) => e.target.select()} />
        <button type="button" onClick=${() => setCreated(null)}>I have stored it</button>
      </div>`}
    <p role="status">${notice}</p>
    <${ErrorMessage} error=${error} />
    ${keys && html`<table>
      <thead><tr><th scope="col">Name</th><th scope="col">Mode</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${keys.map((k) => html`<tr>
        <th scope="row">${k.name}</th><td>${k.mode}</td><td>${k.scopes.join(', ')}</td><td>${formatTime(k.created_at)}</td><td>${formatTime(k.last_used_at)}</td>
        <td>${confirming === k.api_key_id
          ? html`<button type="button" class="danger" onClick=${() => revoke(k)}>Confirm revoke</button> <button type="button" onClick=${() => setConfirming(null)}>Cancel</button>`
          : html`<button type="button" onClick=${() => setConfirming(k.api_key_id)} aria-label=${`Revoke ${k.name}`}>Revoke</button>`}</td>
      </tr>`)}</tbody>
    </table>`}
  `;
}
