// CSV for imports and exports: the delimiter of a file guessed from its header line, its rows read as
// a stream (csv-reader.ts: every row numbered, a malformed one an error naming its line), its rows
// counted while an upload is stored, and lines written for a spreadsheet to open safely.
import { badRequest } from '../../platform/errors.ts';
import { CsvReader, CsvUnreadable, type CsvRow, type Delimiter } from './csv-reader.ts';

export { CsvUnreadable, type CsvRow, type Delimiter } from './csv-reader.ts';
export const DELIMITERS = [',', ';', '\t'] as const satisfies readonly Delimiter[];

/** The size of the pieces a stored file is parsed in: the rows of one piece at most are held at once. */
const PIECE_BYTES = 64 * 1024;

/**
 * The delimiter of a file from its first bytes: of `,`, `;` and tab, the one found most often
 * outside quotes on the first line; `,` when none is.
 */
export function detectDelimiter(head: Buffer): Delimiter {
  const text = head.toString('utf8');
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best: Delimiter = ',';
  for (const d of DELIMITERS) if (counts.get(d)! > counts.get(best)!) best = d;
  return best;
}

/**
 * The rows of a CSV read from `source`, in order, records and errors alike. A file the reader gives
 * up on (CsvUnreadable) ends them with that error, after every row read before it.
 */
export async function* csvRows(source: AsyncIterable<Buffer>, delimiter: Delimiter): AsyncGenerator<CsvRow> {
  const rows: CsvRow[] = [];
  const reader = new CsvReader(delimiter, (row) => rows.push(row));
  for await (const chunk of source) {
    for (let at = 0; at < chunk.length; at += PIECE_BYTES) {
      try {
        reader.write(chunk.subarray(at, at + PIECE_BYTES));
      } finally {
        yield* rows.splice(0);
      }
    }
  }
  try {
    await reader.end();
  } finally {
    yield* rows.splice(0);
  }
}

/** What an upload's pass learns of a file: its header, its number of data rows and its delimiter. */
export interface CsvSummary {
  header: string[] | undefined;
  headerError: string | undefined;
  rows: number;
  delimiter: Delimiter;
}

/**
 * Counts the rows of a file as it streams by (written to with `write`, ended with `end`), holding
 * nothing but the header: an upload learns `rows_total` and the header while it is stored. Its rows
 * are those an import of the file reads, errors included. A file the reader gives up on is refused
 * (400) as soon as it shows.
 */
export class CsvCounter {
  #reader: CsvReader | undefined;
  #head: Buffer[] = [];
  #headSize = 0;
  #summary: CsvSummary = { header: undefined, headerError: undefined, rows: 0, delimiter: ',' };

  write(piece: Buffer): void {
    try {
      if (this.#reader) return this.#reader.write(piece);
      this.#head.push(piece);
      this.#headSize += piece.length;
      // The delimiter is read from the first line: wait for it (or 64 KiB) before parsing.
      if (this.#headSize >= 65_536 || piece.includes(10)) this.#start();
    } catch (error) {
      // As a file that fails at its end is refused (receiveFile).
      if (error instanceof CsvUnreadable) throw badRequest(`The file is not readable as CSV: ${error.message}`);
      throw error;
    }
  }

  #start(): void {
    const head = Buffer.concat(this.#head);
    this.#head = [];
    this.#summary.delimiter = detectDelimiter(head);
    this.#reader = new CsvReader(this.#summary.delimiter, (row) => {
      if (row.row > 1) this.#summary.rows++;
      else if ('record' in row) this.#summary.header = row.record;
      else this.#summary.headerError = row.error;
    });
    this.#reader.write(head);
  }

  async end(): Promise<CsvSummary> {
    if (!this.#reader) this.#start();
    await this.#reader!.end();
    return this.#summary;
  }
}

/** First characters that make a spreadsheet read a cell as a formula (OWASP's list), after any `'` escaping them already. */
const FORMULA = /^'*[=+\-@\t\r]/;

/**
 * A text value as a cell a spreadsheet shows as the text it is: one that would be read as a formula
 * (starting with `=` `+` `-` `@`, a tab or a carriage return) gets a leading `'`. So does one that
 * already looks escaped (`'=`), so that an import taking the `'` off (`fromSpreadsheetText`) gives
 * back every value exactly.
 */
export const toSpreadsheetText = (text: string) => (FORMULA.test(text) ? `'${text}` : text);

/** A cell as an import reads it: the `'` that escaped a formula character taken off. */
export const fromSpreadsheetText = (text: string) => (text.startsWith("'") && FORMULA.test(text) ? text.slice(1) : text);

/**
 * One CSV line (RFC 4180): a value holding the delimiter, a quote or a line break is quoted. Text is
 * escaped for spreadsheets (`toSpreadsheetText`); numbers are data, never a formula, and stay as they
 * are (`-5`).
 */
export function csvLine(values: readonly unknown[]): string {
  return `${values.map((v) => {
    const text = v === null || v === undefined ? '' : typeof v === 'string' ? toSpreadsheetText(v) : String(v);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  }).join(',')}\r\n`;
}
