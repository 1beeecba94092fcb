// A quote's page beside its details: where it stands and what can be done with it (send, void, edit
// as a draft, duplicate, delete), its lines with their totals (computed by the service; the page
// only shows them), and, while it is a draft, a form that adds a line of the catalog or of its own.
import { api, query } from './api.js';
import { ErrorMessage, formatMoney, State } from './common.js';
import { html, useEffect, useState } from './html.js';

const AWAITING = ['sent', 'viewed'];
const PERCENT = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 4 });
const percent = (value) => PERCENT.format(value / 100);

/** The operations a quote in `status` allows, as [path, button label, what to say once done]. */
function operationsOf(status) {
  const ops = [];
  if (status === 'draft') ops.push(['send', 'Send', 'Sent.']);
  if (status === 'draft' || AWAITING.includes(status)) ops.push(['void', 'Void', 'Voided: it can no longer be accepted.']);
  if ([...AWAITING, 'declined', 'expired'].includes(status)) ops.push(['edit-as-draft', 'Edit as a draft', 'Back to a draft: its old public link no longer opens it.']);
  ops.push(['duplicate', 'Duplicate', '']);
  return ops;
}

/** A stored line as the API takes it back (PATCH replaces every line). */
const asInput = (line) => ({
  ...(line.product_id ? { product_id: line.product_id } : {}),
  name: line.name, description: line.description, quantity: line.quantity, unit_price: line.unit_price, discount_percent: line.discount_percent,
});

export function QuoteSections({ quote, onChange }) {
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState('');
  const [deleting, setDeleting] = useState(false);
  const path = `/v1/quotes/${quote.id}`;
  const draft = quote.status === 'draft';
  const money = (amount) => formatMoney(amount, quote.currency);
  const run = async (op, done) => {
    setError(null);
    try {
      const body = await api(`${path}/${op}`, { method: 'POST' });
      if (op === 'duplicate') location.hash = `#/quotes/${body.data.id}`;
      else onChange(body.data);
      setNotice(done);
    } catch (e) {
      setError(e);
    }
  };
  const saveLines = async (lines) => {
    setError(null);
    try {
      onChange((await api(path, { method: 'PATCH', body: { line_items: lines } })).data);
      return true;
    } catch (e) {
      setError(e);
      return false;
    }
  };
  const remove = () => api(path, { method: 'DELETE' }).then(() => { location.hash = '#/quotes'; }, setError);
  const unsendable = quote.line_items.length === 0 ? 'Add a line before sending.' : !quote.contact_id ? 'A quote needs a contact to be sent to.' : '';
  return html`
    <section aria-labelledby="quote-title">
      <h2 id="quote-title">Quote <${State} value=${quote.status} /> ${quote.revision > 1 && html`<span class="count">revision ${quote.revision}</span>`}</h2>
      <div class="actions">
        ${operationsOf(quote.status).map(([op, label, done]) => html`
          <button type="button" disabled=${op === 'send' && Boolean(unsendable)} onClick=${() => run(op, done)}>${label}</button>`)}
        ${draft && (deleting
          ? html`<button type="button" class="danger" onClick=${remove}>Confirm delete</button> <button type="button" onClick=${() => setDeleting(false)}>Cancel</button>`
          : html`<button type="button" onClick=${() => setDeleting(true)}>Delete</button>`)}
      </div>
      ${draft && unsendable && html`<p class="hint">${unsendable}</p>`}
      ${quote.public_token && html`<${PublicLink} token=${quote.public_token} />`}
      <p role="status">${notice}</p>
      <${ErrorMessage} error=${error} />
      <table aria-label="Lines">
        <thead><tr><th scope="col">Item</th><th scope="col">Quantity</th><th scope="col">Unit price</th><th scope="col">Discount</th><th scope="col">Total</th>
          ${draft && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}</tr></thead>
        <tbody>
          ${quote.line_items.length === 0 && html`<tr><td colspan="6">No lines yet.</td></tr>`}
          ${quote.line_items.map((line, i) => html`<tr>
            <th scope="row">${line.name}${line.description && html`<div class="hint">${line.description}</div>`}</th>
            <td>${line.quantity}</td><td>${money(line.unit_price)}</td>
            <td>${line.discount ? `${money(line.discount)} (${percent(line.discount_percent)})` : '—'}</td><td>${money(line.total)}</td>
            ${draft && html`<td><button type="button" aria-label=${`Remove ${line.name}`}
              onClick=${() => saveLines(quote.line_items.filter((_, j) => j !== i).map(asInput))}>Remove</button></td>`}
          </tr>`)}
        </tbody>
        <tfoot class="totals">
          <tr><th scope="row" colspan="4">Subtotal</th><td>${money(quote.subtotal)}</td></tr>
          <tr><th scope="row" colspan="4">Discount</th><td>${money(quote.discount_total)}</td></tr>
          <tr><th scope="row" colspan="4">Tax (${percent(quote.tax_percent)})</th><td>${money(quote.tax_total)}</td></tr>
          <tr class="grand"><th scope="row" colspan="4">Total</th><td>${money(quote.total)}</td></tr>
        </tfoot>
      </table>
      ${draft && html`<${NewLine} quote=${quote} onAdd=${(line) => saveLines([...quote.line_items.map(asInput), line])} />`}
    </section>
  `;
}

/**
 * The public link of a quote just sent: only its hash is stored, so the answer of the send is the
 * one place it is ever seen.
 */
function PublicLink({ token }) {
  const url = `${location.origin}/q/${encodeURIComponent(token)}`;
  return html`
    <div class="token">
      <p><strong>The quote's public link.</strong> Send it to the recipient now: it is shown only this once.</p>
      <input readonly aria-label="Public link of the quote" value=${url} onFocus=${(e) => e.target.select()} />
      <a href=${url} target="_blank" rel="noopener noreferrer">Open it as the recipient sees it</a>
    </div>
  `;
}

/** A line of an active product in the quote's currency (its price unless one is given), or of its own. */
function NewLine({ quote, onAdd }) {
  const [products, setProducts] = useState([]);
  const [productId, setProductId] = useState('');
  const [name, setName] = useState('');
  const [quantity, setQuantity] = useState('1');
  const [price, setPrice] = useState('');
  const [discount, setDiscount] = useState('');
  useEffect(() => {
    api(`/v1/quotes/quotable-products${query({ currency: quote.currency, limit: 100 })}`).then((page) => setProducts(page.data), () => setProducts([]));
  }, [quote.currency]);
  const submit = async (event) => {
    event.preventDefault();
    const line = { quantity: Number(quantity) };
    if (productId) line.product_id = productId;
    else line.name = name.trim();
    if (price !== '') line.unit_price = Math.round(Number(price) * 100);
    if (discount !== '') line.discount_percent = Number(discount);
    if (await onAdd(line)) {
      setName('');
      setPrice('');
      setDiscount('');
      setQuantity('1');
    }
  };
  return html`
    <form class="form-grid" onSubmit=${submit} aria-label="New line">
      <h3 class="span">Add a line</h3>
      <label for="line-product">Product</label>
      <select id="line-product" value=${productId} onChange=${(e) => setProductId(e.target.value)}>
        <option value="">A line of its own</option>
        ${products.map((p) => html`<option value=${p.id}>${p.name} (${formatMoney(p.unit_price, p.currency)})</option>`)}
      </select>
      ${!productId && html`<label for="line-name">Name</label><input id="line-name" required maxlength="200" value=${name} onInput=${(e) => setName(e.target.value)} />`}
      <label for="line-quantity">Quantity</label>
      <input id="line-quantity" type="number" required min="0.0001" step="0.0001" value=${quantity} onInput=${(e) => setQuantity(e.target.value)} />
      <label for="line-price">Unit price${productId ? ' (the product\'s when empty)' : ''}</label>
      <input id="line-price" type="number" min="0" step="0.01" required=${!productId} placeholder="0.00" value=${price} onInput=${(e) => setPrice(e.target.value)} />
      <label for="line-discount">Discount (%)</label>
      <input id="line-discount" type="number" min="0" max="100" step="0.0001" placeholder="0" value=${discount} onInput=${(e) => setDiscount(e.target.value)} />
      <span></span><div><button type="submit">Add line</button></div>
    </form>
  `;
}
