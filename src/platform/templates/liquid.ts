// Message templates in Liquid (liquidjs), strict both ways: a template is checked when it is saved,
// against the variables its messages will have, so a misspelt `{{ contact.frist_name }}` is a 422
// naming it then, never a blank in a prospect's inbox; and rendering refuses an unknown variable or
// filter rather than printing nothing. Templates are user input run on the server, so they read
// only the values given (own properties: no prototype walks), include no files, and parse and render
// within limits of time and memory.
import { Liquid, type Template } from 'liquidjs';
import { validationError } from '../errors.ts';

const NO_FILES = {
  exists: async () => false,
  existsSync: () => false,
  readFile: () => Promise.reject(new Error('templates cannot include files')),
  readFileSync: () => {
    throw new Error('templates cannot include files');
  },
  resolve: (_dir: string, file: string) => file,
};

const engine = new Liquid({
  strictVariables: true, strictFilters: true, ownPropertyOnly: true, fs: NO_FILES, relativeReference: false,
  // A template is at most a message: 20 kB parses in well under a millisecond.
  parseLimit: 100_000, renderLimit: 200, memoryLimit: 10_000_000,
});

/**
 * What a template may name: given a variable's path (`['contact', 'first_name']`), undefined when it
 * has a value, else why not (`is not a contact field`).
 */
export type VariableCheck = (path: readonly string[]) => string | undefined;

export interface TemplateProblem {
  /** The variable as written (`contact.frist_name`), or null for a syntax error. */
  variable: string | null;
  msg: string;
}

function parse(text: string): Template[] | TemplateProblem {
  try {
    return engine.parse(text);
  } catch (error) {
    return { variable: null, msg: `is not a valid Liquid template: ${(error as Error).message.split(', line:')[0]}` };
  }
}

/** The problems of `text` as a template whose variables `check` knows: none when it can be rendered. */
export function templateProblems(text: string, check: VariableCheck): TemplateProblem[] {
  const parsed = parse(text);
  if (!Array.isArray(parsed)) return [parsed];
  const problems: TemplateProblem[] = [];
  const seen = new Set<string>();
  for (const variables of Object.values(engine.analyzeSync(parsed, { partials: false }).globals)) {
    for (const variable of variables) {
      const path = variable.segments.map((s) => String(s));
      const written = path.join('.');
      if (seen.has(written)) continue;
      seen.add(written);
      const why = check(path);
      if (why) problems.push({ variable: written, msg: `{{ ${written} }} ${why}` });
    }
  }
  return problems;
}

/** A 422 for the first problem of each template field, or nothing. */
export function checkTemplates(fields: Record<string, string | null | undefined>, check: VariableCheck): void {
  const detail: Array<{ loc: string[]; msg: string; type: string }> = [];
  for (const [field, text] of Object.entries(fields)) {
    if (typeof text !== 'string') continue;
    const [first] = templateProblems(text, check);
    if (first) detail.push({ loc: ['body', ...field.split('.')], msg: first.msg, type: first.variable === null ? 'value_error.template' : 'value_error.template_variable' });
  }
  if (detail.length > 0) throw validationError(detail);
}

/**
 * Parsed templates by their text, the most recently used last: a sequence's step renders the same
 * few templates for every enrollment, and parsing was most of a render. A parsed template holds no
 * state of a render, so one may serve every tenant that wrote the same text.
 */
const parsed = new Map<string, Template[]>();
const PARSED_KEPT = 256;

function parsedOf(text: string): Template[] {
  let templates = parsed.get(text);
  if (templates) parsed.delete(text);
  else templates = engine.parse(text);
  parsed.set(text, templates);
  if (parsed.size > PARSED_KEPT) parsed.delete(parsed.keys().next().value!);
  return templates;
}

/** `text` rendered with `values`; throws when it names what `values` lacks (checked at save, so rare). */
export function renderTemplate(text: string, values: Record<string, unknown>): string {
  return engine.renderSync(parsedOf(text), values) as string;
}
