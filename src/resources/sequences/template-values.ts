// What a step's subject and body may name, and the values they are rendered with: the contact
// (`{{ contact.first_name }}`, its custom fields as `{{ contact.custom_fields.plan }}`, and the
// contact's fields bare, `{{ first_name }}`, as campaign steps write them), its company
// (`{{ company.name }}`), the sender (`{{ sender.name }}`, `{{ sender.email }}`,
// `{{ sender.signature }}`) and the message's own `{{ unsubscribe_url }}`. A value a record lacks
// renders empty; a name outside these is refused when the step is saved.
import { parseJson } from '../../db/sql.ts';
import type { Row } from '../../platform/resource/define.ts';
import type { VariableCheck } from '../../platform/templates/liquid.ts';

export const CONTACT_FIELDS = ['id', 'name', 'first_name', 'last_name', 'title', 'company', 'work_email', 'personal_email', 'phone', 'linkedin_url', 'city', 'country', 'seniority', 'department', 'timezone', 'email'] as const;
export const COMPANY_FIELDS = ['id', 'name', 'domain', 'industry', 'employee_count', 'annual_revenue', 'city', 'country', 'linkedin_url', 'description'] as const;
export const SENDER_FIELDS = ['name', 'email', 'signature'] as const;
// `unsubscribe_link` as campaign steps write it.
const MESSAGE_VARIABLES = new Set(['unsubscribe_url', 'unsubscribe_link']);

const known = (fields: readonly string[]) => new Set<string>(fields);
const CONTACT = known(CONTACT_FIELDS);
const COMPANY = known(COMPANY_FIELDS);
const SENDER = known(SENDER_FIELDS);

/** The check of a step's variables, given the names of the contacts' custom fields. */
export function stepVariableCheck(customFields: ReadonlySet<string>): VariableCheck {
  return ([root, member, sub, ...rest]) => {
    if (MESSAGE_VARIABLES.has(root) && member === undefined) return undefined;
    if (CONTACT.has(root) && member === undefined) return undefined;
    const fields = root === 'contact' ? CONTACT : root === 'company' ? COMPANY : root === 'sender' ? SENDER : undefined;
    if (!fields) return `is not a variable: use contact.<field>, company.<field>, sender.<field> or unsubscribe_url`;
    if (member === undefined) return `names the whole ${root}: name one of its fields (${root}.name)`;
    if (root === 'contact' && member === 'custom_fields') {
      if (sub === undefined) return 'names every custom field: name one (contact.custom_fields.<name>)';
      return customFields.has(sub) && rest.length === 0 ? undefined : `is not a custom field of contacts (GET /v1/fields?object=contact)`;
    }
    if (!fields.has(member) || sub !== undefined) return `is not a ${root} field`;
    return undefined;
  };
}

const pick = (row: Row | undefined, fields: readonly string[]) =>
  Object.fromEntries(fields.map((f) => [f, row?.[f] ?? null]));

/** The values a step is rendered with for one contact. */
export function templateValues(contact: Row, company: Row | undefined, mailbox: Row | undefined, unsubscribeUrl: string | null): Record<string, unknown> {
  const email = contact.work_email ?? contact.personal_email ?? null;
  const person = { ...pick(contact, CONTACT_FIELDS), email, custom_fields: parseJson<Record<string, unknown>>(contact.custom_fields) ?? {} };
  return {
    ...person,
    contact: person,
    company: pick(company, COMPANY_FIELDS),
    sender: { name: mailbox?.display_name ?? null, email: mailbox?.email ?? null, signature: mailbox?.signature ?? null },
    unsubscribe_url: unsubscribeUrl,
    unsubscribe_link: unsubscribeUrl,
  };
}
