// A stage that refused a deal for want of evidence, in a salesperson's words: what each missing piece
// is (its title and meaning from the evidence library), a form that records them on the deal
// (`POST /v1/deals/{id}/evidence`, one per piece) and then tries the move again, or moving the deal
// without them (recorded on the stage change as made without the evidence).
import { api } from './api.js';
import { ErrorMessage } from './common.js';
import { html, useEffect, useRef, useState } from './html.js';

/** `budget_confirmed` → "Budget confirmed": for a key the library no longer names. */
const inWords = (key) => key.charAt(0).toUpperCase() + key.slice(1).replaceAll('_', ' ');

export function Gate({ deal, stage, missing, onRecorded, onForce, onDismiss }) {
  const [library, setLibrary] = useState(new Map());
  const [answers, setAnswers] = useState({});
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const heading = useRef(null);
  useEffect(() => {
    api('/v1/pipelines/evidence-library').then((body) => setLibrary(new Map(body.data.map((k) => [k.key, k]))), () => {});
    heading.current?.focus();
  }, []);
  const answer = (key, field, value) => setAnswers((before) => ({ ...before, [key]: { ...before[key], [field]: value } }));

  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      for (const key of missing) {
        const { note = '', source = '' } = answers[key] ?? {};
        await api(`/v1/deals/${deal.id}/evidence`, { method: 'POST', body: { key, note: note.trim(), source: source.trim() || null } });
      }
      await onRecorded();
    } catch (e) {
      setError(e);
    }
    setBusy(false);
  };
  const title = (key) => library.get(key)?.title ?? inWords(key);
  const things = missing.length === 1 ? 'one thing' : `${missing.length} things`;
  return html`
    <section class="blocked" aria-labelledby="gate-title">
      <h2 id="gate-title" tabindex="-1" ref=${heading}>${deal.name} can't move to ${stage} yet</h2>
      <p>${stage} needs ${things} this deal doesn't have on record yet. Write down what you learned for each and the deal moves on.</p>
      <form onSubmit=${submit} aria-label="Record the missing evidence">
        <ol class="missing">
          ${missing.map((key) => html`<li>
            <p><strong>${title(key)}</strong>${library.get(key)?.description && html` — <span class="hint">${library.get(key).description}</span>`}</p>
            <div class="evidence-fields">
              <label for=${`evidence-${key}-note`}><span class="visually-hidden">${title(key)}: </span>What you learned</label>
              <input id=${`evidence-${key}-note`} required maxlength="2000" value=${answers[key]?.note ?? ''} onInput=${(e) => answer(key, 'note', e.target.value)} />
              <label for=${`evidence-${key}-source`}><span class="visually-hidden">${title(key)}: </span>Where from</label>
              <input id=${`evidence-${key}-source`} maxlength="200" placeholder="Call, e-mail, meeting…" value=${answers[key]?.source ?? ''} onInput=${(e) => answer(key, 'source', e.target.value)} />
            </div>
          </li>`)}
        </ol>
        <div class="actions">
          <button type="submit" disabled=${busy}>Record and move to ${stage}</button>
          <button type="button" onClick=${onForce}>Move without it</button>
          <button type="button" onClick=${onDismiss}>Cancel</button>
        </div>
      </form>
      <p class="hint">Moving without it is allowed: the move is logged as made without the evidence.</p>
      <${ErrorMessage} error=${error} />
    </section>
  `;
}
