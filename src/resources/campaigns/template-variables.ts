// The variables of a step's subject and body, as the launch preflight reads them: Liquid-style
// `{{ first_name }}` or `{{ contact.first_name }}`, each a field of the contact the message goes to.
// A variable with a `default` filter (`{{ first_name | default: "there" }}`) always renders, and the
// unsubscribe link is the sender's own. Anything else inside `{{ }}` cannot be rendered.
import type { Step } from './campaigns.schemas.ts';

const COLUMNS = ['name', 'first_name', 'last_name', 'title', 'company', 'work_email', 'personal_email', 'phone', 'linkedin_url', 'city', 'country', 'seniority', 'department'];
/** The value of each variable a step may name, as SQL on the contact row `c`; `email` is the address the message goes to. */
export const CONTACT_VARIABLES: Readonly<Record<string, string>> = {
  ...Object.fromEntries(COLUMNS.map((column) => [column, `c.${column}`])),
  email: 'coalesce(c.work_email, c.personal_email)',
};
/** Variables every message has, whoever it goes to. */
const SENDER_VARIABLES = new Set(['unsubscribe_url', 'unsubscribe_link']);

const TAG = /\{\{([\s\S]*?)\}\}/g;
const VARIABLE = /^\s*(?:contact\.)?([A-Za-z_][A-Za-z0-9_]*)\s*(\|[\s\S]*)?$/;

export interface StepVariables {
  /** Contact variables the steps need a value of, in order of first use. */
  needed: string[];
  /** What cannot be rendered at all: `Step 2 body: {{ foo }} is not a contact field`. */
  problems: string[];
}

/** Reads the variables of every step's subject and body. */
export function stepVariables(steps: readonly Step[]): StepVariables {
  const needed = new Set<string>();
  const problems: string[] = [];
  steps.forEach((step, i) => {
    for (const part of ['subject', 'body'] as const) {
      const text = step[part];
      if (!text) continue;
      const where = `Step ${i + 1} ${part}`;
      // An opening without its close (or the reverse) would reach the recipient as written.
      const unclosed = text.replace(TAG, '');
      if (unclosed.includes('{{') || unclosed.includes('}}')) problems.push(`${where} has an unclosed {{ }}`);
      for (const [tag, inner] of text.matchAll(TAG)) {
        const m = VARIABLE.exec(inner);
        if (!m) {
          problems.push(`${where}: ${tag} is not a variable`);
          continue;
        }
        const [, name, filters] = m;
        if (SENDER_VARIABLES.has(name) || /\|\s*default\s*:/.test(filters ?? '')) continue;
        if (CONTACT_VARIABLES[name] === undefined) problems.push(`${where}: ${tag} is not a contact field`);
        else needed.add(name);
      }
    }
  });
  return { needed: [...needed], problems };
}

/** Whether a body shows the recipient a way out: a link or words to unsubscribe or opt out. */
export const showsUnsubscribe = (body: string | null): boolean =>
  body !== null && /unsubscribe|opt[\s-]?out|\{\{\s*unsubscribe_(?:url|link)\s*\}\}/i.test(body);
