// The shell examples of the README and docs/*.md, read from their Markdown so that a test can run
// them as a reader would (test/platform/readme-examples.test.ts).

export interface ShellBlock {
  file: string;
  /** The line of the opening fence (1-based). */
  line: number;
  code: string;
}

const FENCE = /^( *)```(\w*)\s*$/;
const SHELL = new Set(['sh', 'bash', 'shell', 'console']);

/** The fenced shell blocks of a Markdown text, in order, each without the indentation of its fence. */
export function shellBlocks(markdown: string, file: string): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    let end = i + 1;
    while (end < lines.length && lines[end].trim() !== '```') end++;
    if (SHELL.has(open[2])) {
      const body = lines.slice(i + 1, end).map((l) => (l.slice(0, indent).trim() === '' ? l.slice(indent) : l));
      blocks.push({ file, line: i + 1, code: body.join('\n') });
    }
    i = end;
  }
  return blocks;
}

/** The commands of a block, continuation lines joined, comment lines left out, each with its line in the block. */
export function commands(code: string): Array<{ line: number; text: string }> {
  const out: Array<{ line: number; text: string }> = [];
  const lines = code.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*(#|$)/.test(lines[i])) continue;
    const start = i;
    let text = lines[i];
    // A line ending in `\`, or inside a quoted string still open (a JSON body over several lines).
    while (i + 1 < lines.length && (/\\$/.test(text) || openQuote(text))) text = `${text.replace(/\\$/, '')}\n${lines[++i]}`;
    out.push({ line: start, text });
  }
  return out;
}

function openQuote(text: string): boolean {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === undefined && c === '#' && (i === 0 || /\s/.test(text[i - 1]))) return false;
    if (quote === undefined && (c === "'" || c === '"')) quote = c;
    else if (c === quote && (quote === "'" || text[i - 1] !== '\\')) quote = undefined;
  }
  return quote !== undefined;
}

/** How many times a command calls curl (as a word: `curl -s …`, `$(curl …)`, `| curl`). */
export const curlCalls = (text: string) => (text.match(/(^|[\s($|;&])curl\s/g) ?? []).length;

/** Whether a block is an example to run against the service: it calls the API or the CLI. */
export const callsTheService = (block: ShellBlock) => commands(block.code).some((c) => curlCalls(c.text) > 0 || /\bnpm run --silent cli -- /.test(c.text));

export interface CurlRequest {
  method: string;
  url: string;
}

/**
 * The method and URL of each curl call in a command, read the way curl reads its arguments
 * (`-X`, a body through `-d`/`-F` making a POST), with shell variables left as they are written.
 */
export function curlRequests(text: string): CurlRequest[] {
  const requests: CurlRequest[] = [];
  for (const part of text.split(/(?:^|[\s($|;&])curl\s/).slice(1)) {
    const words = shellWords(part);
    let method: string | undefined;
    let body = false;
    let url: string | undefined;
    for (let i = 0; i < words.length; i++) {
      const word = words[i];
      if (word === '-X' || word === '--request') method = words[++i];
      else if (['-d', '--data', '--data-raw', '--data-binary', '-F', '--form'].includes(word)) {
        body = true;
        i++;
      } else if (['-H', '--header', '-o', '--output', '-w', '-u'].includes(word)) i++;
      else if (!word.startsWith('-') && url === undefined) url = word;
    }
    if (url !== undefined) requests.push({ method: method ?? (body ? 'POST' : 'GET'), url });
  }
  return requests;
}

/**
 * Words of a shell command, quotes removed (no expansion: `$VAR` stays as written), up to its end:
 * an unquoted `)`, `|`, `;` or `&`.
 */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | undefined;
  let started = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      started = true;
    } else if (')|;&'.includes(c)) {
      break;
    } else if (/\s/.test(c)) {
      if (started) words.push(word);
      word = '';
      started = false;
    } else {
      word += c;
      started = true;
    }
  }
  if (started) words.push(word);
  return words;
}

/**
 * One bash script running the blocks in order, as a reader pastes them into one terminal (variables
 * carry from block to block), with `replace` applied to their text (the base URL of the service run).
 * Each block announces itself on stderr (`@@block <file>:<line>`), and each curl call reports the
 * status, method and URL of its answer there (`@@curl 201 POST http://…`); `-S` makes curl say why
 * when no answer came (within a minute).
 */
export function exampleScript(blocks: ShellBlock[], replace: Array<[string, string]>, prelude: string[] = []): string {
  const lines = [
    'set -euo pipefail',
    `curl() { command curl -sS --max-time 60 -w '%{stderr}@@curl %{http_code} %{method} %{url_effective}\\n' "$@"; }`,
    ...prelude,
  ];
  for (const block of blocks) {
    let code = block.code;
    for (const [from, to] of replace) code = code.split(from).join(to);
    lines.push(`printf '@@block %s\\n' '${block.file}:${block.line}' >&2`, code);
  }
  return `${lines.join('\n')}\n`;
}
