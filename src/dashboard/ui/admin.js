// Webhook endpoints and their deliveries, usage, and API keys.
import { api, query } from './api.js';
import { DateTime, ErrorMessage, Heading, State } from './common.js';
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
              <th scope="row">${d.event_type}</th><td><${State} value=${d.status} /></td><td>${d.attempt_count}</td>
              <td>${last ? (last.status_code ?? last.error ?? '—') : '—'}</td><td><${DateTime} seconds=${d.updated_at} /></td>
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

const MONTH = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' });
const NUMBER = new Intl.NumberFormat();

/** Where the ticks of an axis from 0 to `top` go: 0, the middle and the top, as whole numbers. */
const ticksUpTo = (top) => [...new Set([0, Math.round(top / 2), top])];
/** Day 1, every fifth day and the last day of the month. */
const dayTicks = (days) => [...new Set([1, ...Array.from({ length: Math.floor(days / 5) }, (_, i) => (i + 1) * 5), days])].filter((d) => d <= days);

/** The balance line over the days of the month, with labelled axes: credits left by day. */
function Chart({ balances, daysInMonth, month }) {
  const width = 720;
  const height = 260;
  const left = 76;
  const right = 16;
  const top = 16;
  const bottom = 52;
  const highest = Math.max(...balances, 1);
  const x = (day) => left + ((day - 1) / Math.max(daysInMonth - 1, 1)) * (width - left - right);
  const y = (value) => height - bottom - (value / highest) * (height - top - bottom);
  const points = balances.map((b, i) => `${x(i + 1).toFixed(1)},${y(b).toFixed(1)}`).join(' ');
  const first = balances[0];
  const last = balances[balances.length - 1];
  const xLabel = `Day of ${month} (UTC)`;
  return html`
    <svg class="chart" viewBox=${`0 0 ${width} ${height}`} role="img" aria-labelledby="chart-title chart-desc">
      <title id="chart-title">Credits left at the end of each day, ${month}</title>
      <desc id="chart-desc">Vertical axis: credits left; horizontal axis: ${xLabel.toLowerCase()}. From ${first} credits on day 1 to ${last} credits on day ${balances.length}; the highest is ${highest}.</desc>
      ${ticksUpTo(highest).map((v) => html`
        <line class="grid" x1=${left} y1=${y(v)} x2=${width - right} y2=${y(v)} />
        <text x=${left - 8} y=${y(v) + 4} text-anchor="end">${NUMBER.format(v)}</text>`)}
      ${dayTicks(daysInMonth).map((d) => html`<text x=${x(d)} y=${height - bottom + 18} text-anchor="middle">${d}</text>`)}
      <line class="axis" x1=${left} y1=${height - bottom} x2=${width - right} y2=${height - bottom} />
      <line class="axis" x1=${left} y1=${top} x2=${left} y2=${height - bottom} />
      <text class="axis-label" x=${left + (width - left - right) / 2} y=${height - 10} text-anchor="middle">${xLabel}</text>
      <text class="axis-label" transform=${`translate(18 ${top + (height - top - bottom) / 2}) rotate(-90)`} text-anchor="middle">Credits left</text>
      <polyline class="line" points=${points} />
      ${balances.map((b, i) => html`<circle class="point" cx=${x(i + 1)} cy=${y(b)} r="3"><title>Day ${i + 1}: ${b} credits left</title></circle>`)}
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
        <div><dt>Balance (credits left)</dt><dd>${usage.balance}</dd></div>
        <div><dt>Granted this month</dt><dd>${usage.granted}</dd></div>
        <div><dt>Used this month</dt><dd>${usage.debited}</dd></div>
        <div><dt>Refunded this month</dt><dd>${usage.refunded}</dd></div>
      </dl>
      <p>${MONTH.format(usage.period_start * 1000)} (UTC), ${usage.transactions} ledger entries.</p>
      <h2 id="balance-title">Credit balance at the end of each day</h2>
      <p class="hint">The credits left, not the credits used: the line falls on a day credits are used and rises when credits are granted or refunded.</p>
      <${Chart} balances=${balances} daysInMonth=${daysInMonth} month=${MONTH.format(usage.period_start * 1000)} />`}
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
      <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Mode</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>${keys.map((k) => {
        const expired = k.expires_at !== null && k.expires_at * 1000 <= Date.now();
        return html`<tr class=${expired ? 'expired' : undefined}>
        <th scope="row">${k.name}</th><td>${expired ? html`<span class="state state-expired">Expired</span>` : html`<span class="state state-active">Active</span>`}</td>
        <td>${k.mode}</td><td>${k.scopes.join(', ')}</td><td><${DateTime} seconds=${k.created_at} /></td><td><${DateTime} seconds=${k.last_used_at} /></td>
        <td>${k.expires_at === null ? 'Never' : html`<${DateTime} seconds=${k.expires_at} />`}</td>
        <td>${confirming === k.api_key_id
          ? html`<button type="button" class="danger" onClick=${() => revoke(k)}>Confirm revoke</button> <button type="button" onClick=${() => setConfirming(null)}>Cancel</button>`
          : html`<button type="button" onClick=${() => setConfirming(k.api_key_id)} aria-label=${`Revoke ${k.name}`}>Revoke</button>`}</td>
      </tr>`;
      })}</tbody>
    </table>`}
  `;
}
