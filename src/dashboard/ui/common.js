// Small pieces every screen uses: formatting, the error message, the page heading that takes focus,
// the pager of a list read by cursor.
import { html, useEffect, useRef } from './html.js';

// Dates and times are the viewer's: their locale and their time zone (Intl's defaults).
const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const DATE = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const FULL = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' });
// A calendar day (`YYYY-MM-DD`) is the same day wherever it is read: formatted in UTC, never shifted.
const DAY = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });

export const formatTime = (seconds) => (seconds ? DATE_TIME.format(seconds * 1000) : '—');
export const formatDate = (seconds) => (seconds ? DATE.format(seconds * 1000) : '—');
export const formatDay = (day) => (day ? DAY.format(new Date(`${day}T00:00:00Z`)) : '—');

/** A moment (unix seconds) for people: short in the viewer's zone, in full (with the zone) on hover. */
export const DateTime = ({ seconds }) => (seconds
  ? html`<time datetime=${new Date(seconds * 1000).toISOString()} title=${FULL.format(seconds * 1000)}>${formatTime(seconds)}</time>`
  : '—');

/** Integer minor units as money (two decimals: the dashboard shows, it never computes). */
export function formatMoney(amount, currency = 'USD') {
  if (amount === null || amount === undefined) return '—';
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(amount / 100);
  } catch {
    return `${(amount / 100).toFixed(2)} ${currency}`;
  }
}

/** A value of a table cell as text: lists joined, nothing as a dash. */
export function show(value) {
  if (value === null || value === undefined || value === '') return '—';
  if (Array.isArray(value)) return value.length ? value.join(', ') : '—';
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  return String(value);
}

/** A state as a badge, its words without underscores. */
export const State = ({ value }) => html`<span class=${`state state-${value}`}>${String(value).replaceAll('_', ' ')}</span>`;

/** The error of a failed call, announced to screen readers. */
export const ErrorMessage = ({ error }) => (error ? html`<p class="error" role="alert">${error.message}</p>` : null);

/** The screen's heading; it takes focus when the screen opens, so keyboard users start there. */
export function Heading({ children }) {
  const ref = useRef(null);
  useEffect(() => ref.current?.focus(), []);
  return html`<h1 tabindex="-1" ref=${ref}>${children}</h1>`;
}

/**
 * Previous and next buttons over a list read by cursor: `cursors` are those of the pages walked so
 * far (the last is the page shown, '' the first), `next` the cursor of the page after (none: the
 * last page), `total` the list's, shown when given.
 */
export const Pager = ({ label, cursors, setCursors, next, total }) => html`
  <nav class="pager" aria-label=${label}>
    <button type="button" disabled=${cursors.length === 1} onClick=${() => setCursors(cursors.slice(0, -1))}>Previous page</button>
    ${total !== undefined && html`<span>Page ${cursors.length} · ${total} in all</span>`}
    <button type="button" disabled=${!next} onClick=${() => setCursors([...cursors, next])}>Next page</button>
  </nav>`;
