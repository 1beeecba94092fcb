// Small pieces every screen uses: formatting, the error message, the page heading that takes focus.
import { html, useEffect, useRef } from './html.js';

export const formatTime = (seconds) => (seconds ? new Date(seconds * 1000).toLocaleString() : '—');
export const formatDate = (seconds) => (seconds ? new Date(seconds * 1000).toLocaleDateString() : '—');

/** Integer minor units as money (two decimals: the dashboard shows, it never computes). */
export function formatMoney(amount, currency = 'USD') {
  if (amount === null || amount === undefined) return '—';
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(amount / 100);
  } catch {
    return `${(amount / 100).toFixed(2)} ${currency}`;
  }
}

/** A value of a record as text: objects and lists as JSON. */
export function show(value) {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The error of a failed call, announced to screen readers. */
export const ErrorMessage = ({ error }) => (error ? html`<p class="error" role="alert">${error.message}</p>` : null);

/** The screen's heading; it takes focus when the screen opens, so keyboard users start there. */
export function Heading({ children }) {
  const ref = useRef(null);
  useEffect(() => ref.current?.focus(), []);
  return html`<h1 tabindex="-1" ref=${ref}>${children}</h1>`;
}
