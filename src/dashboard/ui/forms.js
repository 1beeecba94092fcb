// The "New …" form of a record screen, drawn from the fields its resource lists (resources.js), and
// the picker of a record by name (a contact or deal of a quote) it uses.
import { api } from './api.js';
import { ErrorMessage } from './common.js';
import { html, useEffect, useState } from './html.js';

/** What a form field's text becomes in the request body (undefined: left out). */
function valueOf(field, text) {
  if (field.kind === 'checkbox') return Boolean(text);
  if (text === '' || text === undefined) return undefined;
  if (field.kind === 'select') return field.options.find(([v]) => String(v) === text)?.[0];
  if (field.kind === 'money') return Math.round(Number(text) * 100);
  if (field.kind === 'number') return Number(text);
  // A local date and time in the viewer's zone, as the API's unix seconds.
  if (field.kind === 'datetime') return Math.floor(new Date(text).getTime() / 1000);
  if (field.kind === 'currency') return text.toUpperCase();
  return text;
}

function Input({ field, id, value, set }) {
  const common = { id, name: field.name, required: field.required };
  switch (field.kind) {
    case 'textarea': return html`<textarea ...${common} rows="3" maxlength=${field.max} value=${value} onInput=${(e) => set(e.target.value)} />`;
    case 'select': return html`<select ...${common} value=${value} onChange=${(e) => set(e.target.value)}>${field.options.map(([v, label]) => html`<option value=${String(v)}>${label}</option>`)}</select>`;
    case 'checkbox': return html`<input ...${common} type="checkbox" checked=${Boolean(value)} onChange=${(e) => set(e.target.checked)} />`;
    case 'datetime': return html`<input ...${common} type="datetime-local" value=${value} onInput=${(e) => set(e.target.value)} />`;
    case 'money': return html`<input ...${common} type="number" min="0" step="0.01" placeholder="0.00" value=${value} onInput=${(e) => set(e.target.value)} />`;
    case 'number': return html`<input ...${common} type="number" min="0" max=${field.max} step=${field.step ?? '1'} value=${value} onInput=${(e) => set(e.target.value)} />`;
    case 'currency': return html`<input ...${common} maxlength="3" pattern="[A-Za-z]{3}" placeholder="USD" value=${value} onInput=${(e) => set(e.target.value)} />`;
    // Write-only: a password is sent, never read back (a connection shows only that it is set).
    case 'password': return html`<input ...${common} type="password" autocomplete="new-password" maxlength=${field.max} value=${value} onInput=${(e) => set(e.target.value)} />`;
    case 'choice': return html`<${Choice} id=${id} resource=${field.resource} name=${field.show} value=${value} set=${set} />`;
    case 'record': return html`<${RecordPicker} id=${id} resource=${field.resource} onPick=${set} />`;
    default: return html`<input ...${common} maxlength=${field.max} placeholder=${field.placeholder} value=${value} onInput=${(e) => set(e.target.value)} />`;
  }
}

/** A select of the records of a short list (connections, members, mailboxes): its first 100, by `name`. */
export function Choice({ id, resource, name = (r) => r.name ?? r.email ?? r.id, value, set, none = 'None' }) {
  const [rows, setRows] = useState([]);
  useEffect(() => {
    api(`/v1/${resource}?limit=100`).then((body) => setRows(body.data), () => setRows([]));
  }, [resource]);
  return html`<select id=${id} value=${value ?? ''} onChange=${(e) => set(e.target.value)}>
    <option value="">${none}</option>
    ${rows.map((r) => html`<option value=${r.id}>${name(r)}</option>`)}
  </select>`;
}

/** Puts a part into the body, objects into objects (the settings of a connection come field by field). */
function merge(into, part) {
  for (const [key, v] of Object.entries(part)) {
    into[key] = v && typeof v === 'object' && !Array.isArray(v) ? merge({ ...into[key] }, v) : v;
  }
  return into;
}

const initialOf = (fields) => Object.fromEntries(fields.map((f) => [f.name, f.initial ?? (f.kind === 'select' ? String(f.options[0][0]) : '')]));

/** A form that creates a record of `resource` and hands it to `onCreated`. */
export function CreateForm({ resource, spec, onCreated }) {
  const [values, setValues] = useState(() => initialOf(spec.create));
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = {};
      for (const f of spec.create) {
        const value = valueOf(f, values[f.name]);
        if (value === undefined) continue;
        // A field may stand for a part of the body of another shape (the records a note is about).
        const part = f.body ? f.body(value) : { [f.name]: value };
        merge(body, part);
      }
      const created = await api(`/v1/${resource}`, { method: 'POST', body });
      setValues(initialOf(spec.create));
      onCreated(created.data);
    } catch (e) {
      setError(e);
    }
    setBusy(false);
  };
  return html`
    <details class="create">
      <summary>New ${spec.noun}</summary>
      <form class="form-grid" onSubmit=${submit} aria-label=${`New ${spec.noun}`}>
        ${spec.create.map((f) => html`
          <label for=${`new-${f.name}`}>${f.label}${f.required ? html`<span aria-hidden="true"> *</span>` : ''}</label>
          <${Input} field=${f} id=${`new-${f.name}`} value=${values[f.name]} set=${(v) => setValues((before) => ({ ...before, [f.name]: v }))} />`)}
        <span></span>
        <div><button type="submit" disabled=${busy}>Create ${spec.noun}</button></div>
      </form>
      <${ErrorMessage} error=${error} />
    </details>
  `;
}

/** How a found record reads among the suggestions: contacts with their e-mail or company. */
const describe = (r) => [r.name ?? r.title ?? r.id, r.work_email ?? r.company ?? r.owner].filter(Boolean).join(' · ');

/**
 * A text box that suggests records of `resource` by name as one types (full-text search) and hands
 * the id of the one chosen to `onPick` ('' while none is).
 */
export function RecordPicker({ id, resource, onPick }) {
  const [text, setText] = useState('');
  const [found, setFound] = useState([]);
  useEffect(() => {
    if (text.trim().length < 2) return undefined;
    const controller = new AbortController();
    const timer = setTimeout(() => {
      api(`/v1/search/${resource}`, { method: 'POST', body: { q: text.trim(), limit: 8 }, signal: controller.signal })
        .then((page) => setFound(page.data), () => {});
    }, 200);
    return () => { clearTimeout(timer); controller.abort(); };
  }, [text]);
  const input = (event) => {
    const typed = event.target.value;
    setText(typed);
    const chosen = found.find((r) => describe(r) === typed);
    event.target.setCustomValidity(typed && !chosen ? 'Choose one of the suggestions' : '');
    onPick(chosen?.id ?? '');
  };
  return html`
    <input id=${id} type="search" list=${`${id}-options`} autocomplete="off" value=${text} onInput=${input} placeholder=${`Type to find a ${resource.replace(/s$/, '')}`} />
    <datalist id=${`${id}-options`}>${found.map((r) => html`<option value=${describe(r)} />`)}</datalist>
  `;
}
