// A record's fields as a person reads them: labels instead of snake_case keys, moments in the viewer's
// time zone, money in its currency, the records an id names by their names (and linked), lists as
// chips; empty values (null, "", [], {}) are left out.
import { api } from './api.js';
import { DateTime, formatDay, formatMoney } from './common.js';
import { html, useEffect, useState } from './html.js';

/** Labels that are not the key in plain words. */
const LABELS = {
  id: 'ID', list_id: 'List', company_id: 'Company', contact_id: 'Contact', deal_id: 'Deal', product_id: 'Product',
  pipeline_id: 'Pipeline', stage_id: 'Stage', work_email: 'Work e-mail', personal_email: 'Personal e-mail',
  linkedin_url: 'LinkedIn', employee_count: 'Employees', contact_count: 'Contacts', member_count: 'Members', sku: 'SKU',
  external_key: 'External key', signer_ip: 'Signer\'s address', tax_percent: 'Tax rate',
  discount_total: 'Discount', tax_total: 'Tax', weighted_amount: 'Weighted amount', expected_close_date: 'Expected to close',
  associated_list_id: 'Associated list', mailbox_ids: 'Mailboxes', content: 'Note', closed_at: 'Closed', due_at: 'Due', overdue: 'Overdue', active: 'Active (can be quoted)', pinned: 'Pinned', created_by: 'Written by',
};

const WORDS = { id: 'ID', ids: 'IDs', url: 'URL', email: 'e-mail', ip: 'IP', sku: 'SKU' };

/** `first_name` → "First name", `sent_at` → "Sent", `custom_fields.region_code` → "Region code". */
export function labelOf(key) {
  if (LABELS[key]) return LABELS[key];
  const words = key.replace(/_at$/, '').split('_').filter(Boolean).map((w) => WORDS[w] ?? w);
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const MONEY = new Set(['amount', 'weighted_amount', 'unit_price', 'subtotal', 'discount_total', 'tax_total', 'total']);
const PERCENT = new Set(['probability', 'tax_percent', 'discount_percent']);
const TEXT = new Set(['description', 'terms', 'content', 'decline_reason']);
/** Fields whose id names a record with a page of its own, and where that page is. */
export const REFERENCES = { list_id: 'lists', associated_list_id: 'lists', company_id: 'companies', contact_id: 'contacts', deal_id: 'deals', product_id: 'products' };
const ASSOCIATIONS = [['contact_ids', 'contacts', 'Contacts'], ['company_ids', 'companies', 'Companies'], ['deal_ids', 'deals', 'Deals']];
const NUMBER = new Intl.NumberFormat(undefined, { maximumFractionDigits: 4 });
const PERCENT_FORMAT = new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 4 });

/** Nothing worth a line: null, empty text, an empty list, an object of empty values. */
export function isEmpty(value) {
  if (value === null || value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.values(value).every(isEmpty);
  return false;
}

// One request per record named, however many places of a screen name it; a new screen asks again.
const names = new Map();
export const forgetNames = () => names.clear();
function nameOf(path, pick) {
  if (!names.has(path)) names.set(path, api(path).then((body) => pick(body.data), () => null));
  return names.get(path);
}
const recordName = (r) => r.name ?? r.title ?? r.number ?? r.email ?? r.id;

/** The name of the record `id` of `resource` (its id until known, or when it is gone). */
export function RecordName({ resource, id }) {
  const [name, setName] = useState(null);
  useEffect(() => {
    let live = true;
    nameOf(`/v1/${resource}/${encodeURIComponent(id)}`, recordName).then((n) => { if (live) setName(n); });
    return () => { live = false; };
  }, [resource, id]);
  return name ?? id;
}

/** A link to the record's page, by its name. */
export const RecordLink = ({ resource, id }) => html`<a href=${`#/${resource}/${encodeURIComponent(id)}`}><${RecordName} resource=${resource} id=${id} /></a>`;

/** The pipeline's name, or the name of one of its stages. */
function PipelineName({ pipelineId, stageId }) {
  const [name, setName] = useState(null);
  useEffect(() => {
    nameOf(`/v1/deals/pipelines/${encodeURIComponent(pipelineId)}`, (p) => p).then((p) => {
      setName(stageId ? p?.stages.find((s) => s.id === stageId)?.name : p?.name);
    });
  }, [pipelineId, stageId]);
  return name ?? stageId ?? pipelineId;
}

const safeUrl = (value) => /^https?:\/\//i.test(value);

/** One value of `record` as it should read. */
function Value({ name, value, record }) {
  if (REFERENCES[name]) return html`<${RecordLink} resource=${REFERENCES[name]} id=${value} />`;
  if (name === 'pipeline_id') return html`<${PipelineName} pipelineId=${value} />`;
  if (name === 'stage_id') return html`<${PipelineName} pipelineId=${record.pipeline_id} stageId=${value} />`;
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (typeof value === 'number') {
    if (/_at$/.test(name) || name === 'valid_until') return html`<${DateTime} seconds=${value} />`;
    if (MONEY.has(name)) return formatMoney(value, record.currency ?? 'USD');
    if (PERCENT.has(name)) return PERCENT_FORMAT.format(value / 100);
    return NUMBER.format(value);
  }
  if (typeof value === 'string') {
    if (/_date$/.test(name)) return formatDay(value);
    if (/_url$/.test(name) && safeUrl(value)) return html`<a href=${value} target="_blank" rel="noopener noreferrer">${value}</a>`;
    if (/email$/.test(name)) return html`<a href=${`mailto:${value}`}>${value}</a>`;
    if (TEXT.has(name)) return html`<div class="text">${value}</div>`;
    return value;
  }
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== 'object')) return html`<ul class="chips">${value.map((v) => html`<li>${String(v)}</li>`)}</ul>`;
    return html`<ul class="plain">${value.map((v) => html`<li><${Fields} record=${v} /></li>`)}</ul>`;
  }
  return html`<${Fields} record=${value} />`;
}

/** The rows of one field: custom fields and associations spread into a row each. */
function rowsOf(record, name, value) {
  if (name === 'custom_fields') return Object.entries(value).map(([key, v]) => [key, v, labelOf(key)]);
  if (name === 'mailbox_ids') return [[name, value.map((id) => html`<${RecordLink} resource="mailboxes" id=${id} />`), labelOf(name), true]];
  if (name === 'associations') {
    return ASSOCIATIONS.map(([key, resource, label]) => [key, (value[key] ?? []).map((id) => html`<${RecordLink} resource=${resource} id=${id} />`), label, true]);
  }
  return [[name, value, labelOf(name)]];
}

/**
 * The fields of a record as a list of labels and values, without the empty ones and without `omit`
 * (what the page shows elsewhere: the name in the heading, a quote's lines in their table).
 */
export function Fields({ record, omit = [] }) {
  // A contact's company as written is left out when it links the company, which the link names.
  const hidden = new Set([...omit, ...(record.company_id ? ['company'] : [])]);
  const rows = Object.entries(record).filter(([name]) => !hidden.has(name)).flatMap(([name, value]) => rowsOf(record, name, value));
  const shown = rows.filter(([, value]) => !isEmpty(value));
  return html`<dl class="fields">${shown.map(([name, value, label, rendered]) => html`
    <dt>${label}</dt>
    <dd>${rendered ? html`<span class="links">${value}</span>` : html`<${Value} name=${name} value=${value} record=${record} />`}</dd>`)}</dl>`;
}
