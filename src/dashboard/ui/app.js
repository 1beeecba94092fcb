// The dashboard's shell: sign-in with an API key, the organization and mode of the key (a TEST
// MODE banner for test keys), the navigation and the hash routes (#/contacts, #/deals/dea_…).
import { api, ApiError, AUTH_LOST, session } from './api.js';
import { Campaigns, LiveEvents } from './activity.js';
import { ApiKeys, Usage, Webhooks } from './admin.js';
import { Board } from './board.js';
import { Dialer } from './dialer.js';
import { ErrorMessage } from './common.js';
import { forgetNames } from './fields.js';
import { Imports } from './imports.js';
import { html, render, useEffect, useState } from './html.js';
import { RecordPage, RecordTable, RESOURCES } from './tables.js';

const NAV = [
  ['contacts', 'Contacts'], ['companies', 'Companies'], ['deals', 'Deals'], ['pipeline', 'Pipeline'], ['quotes', 'Quotes'], ['products', 'Products'],
  ['tasks', 'Tasks'], ['notes', 'Notes'], ['lists', 'Lists'], ['campaigns', 'Campaigns'], ['sequences', 'Sequences'], ['dialer', 'Dialer'], ['imports', 'Imports'], ['inbox', 'Inbox'], ['outbox', 'Outbox'], ['mailboxes', 'Mailboxes'], ['connections', 'Connections'], ['domains', 'Sending domains'], ['events', 'Live events'],
  ['webhooks', 'Webhooks'], ['usage', 'Usage'], ['keys', 'API keys'],
];

const routeOf = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);

function useRoute() {
  const [route, setRoute] = useState(routeOf);
  useEffect(() => {
    const changed = () => {
      forgetNames();
      setRoute(routeOf());
    };
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

function Screen({ route, org }) {
  const [section, id] = route;
  if (RESOURCES[section]) return id ? html`<${RecordPage} key=${id} resource=${section} id=${id} />` : html`<${RecordTable} key=${section} resource=${section} />`;
  switch (section) {
    case 'pipeline': return html`<${Board} />`;
    case 'campaigns': return html`<${Campaigns} />`;
    case 'dialer': return html`<${Dialer} id=${id} />`;
    case 'imports': return html`<${Imports} />`;
    case 'events': return html`<${LiveEvents} />`;
    case 'webhooks': return html`<${Webhooks} />`;
    case 'usage': return html`<${Usage} />`;
    case 'keys': return html`<${ApiKeys} mode=${org.mode} />`;
    default: return html`<${RecordTable} key="contacts" resource="contacts" />`;
  }
}

function SignIn({ onSignedIn, reason }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    session.save(key.trim());
    try {
      onSignedIn((await api('/v1/organization')).data);
    } catch (e) {
      session.clear();
      setError(e instanceof ApiError && e.status === 401 ? new Error(`This key was refused: ${e.message}`) : e);
    }
    setBusy(false);
  };
  return html`
    <main class="sign-in">
      <h1>Revenue Data Service</h1>
      <form onSubmit=${submit}>
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autocomplete="off" required value=${key} onInput=${(e) => setKey(e.target.value)} placeholder="svc_live_… or svc_test_…" />
        <p class="hint">The key is kept in this tab only (session storage) and sent to this service alone.</p>
        <button type="submit" disabled=${busy}>Sign in</button>
      </form>
      <${ErrorMessage} error=${error ?? (reason && new Error(reason))} />
    </main>
  `;
}

function App() {
  const [org, setOrg] = useState(null);
  const [checking, setChecking] = useState(Boolean(session.key()));
  const [reason, setReason] = useState('');
  const route = useRoute();

  // A key kept from earlier in this tab signs in again on reload.
  useEffect(() => {
    if (!session.key()) return;
    api('/v1/organization').then((body) => setOrg(body.data), () => session.clear()).finally(() => setChecking(false));
  }, []);
  useEffect(() => {
    const lost = (event) => {
      session.clear();
      setOrg(null);
      setReason(`Signed out: ${event.detail || 'the key no longer works'}.`);
    };
    addEventListener(AUTH_LOST, lost);
    return () => removeEventListener(AUTH_LOST, lost);
  }, []);

  if (checking) return html`<p>Loading…</p>`;
  if (!org) return html`<${SignIn} reason=${reason} onSignedIn=${(o) => { setReason(''); setOrg(o); }} />`;
  const signOut = () => {
    session.clear();
    setOrg(null);
  };
  const current = route[0] ?? 'contacts';
  return html`
    <a class="skip" href="#main" onClick=${(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>Skip to content</a>
    ${org.mode === 'test' && html`<div class="test-banner" role="note">TEST MODE — you are working on the sandbox data set; nothing here touches live data.</div>`}
    <header class="top">
      <span class="brand">Revenue Data Service</span>
      <span class="org"><span class="visually-hidden">Organization: </span><strong>${org.name}</strong> <code>${org.id}</code>
        <span class=${`mode mode-${org.mode}`}>${org.mode === 'test' ? 'Test mode' : 'Live mode'}</span></span>
      <button type="button" onClick=${signOut}>Sign out</button>
    </header>
    <div class="layout">
      <nav aria-label="Sections">
        <ul>${NAV.map(([path, label]) => html`<li><a href=${`#/${path}`} aria-current=${current === path ? 'page' : undefined}>${label}</a></li>`)}</ul>
      </nav>
      <main id="main" tabindex="-1">
        <${Screen} key=${route.join('/')} route=${route} org=${org} />
      </main>
    </div>
  `;
}

render(html`<${App} />`, document.getElementById('root'));
