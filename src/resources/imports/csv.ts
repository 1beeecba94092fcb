// Streamed CSV reading (csv-parse) for imports: the delimiter guessed from the header line, a BOM
// dropped, quoted newlines kept, and every data row numbered as a spreadsheet shows it (the header is
// row 1). A malformed row is yielded as an error with its number, never ending the file.
import { Readable } from 'node:stream';
import { parse, type Options } from 'csv-parse';

export const DELIMITERS = [',', ';', '\t'] as const;
export type Delimiter = (typeof DELIMITERS)[number];

export type CsvRow = { row: number; record: string[] } | { row: number; error: string };

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

/** A csv-parse stream numbering rows; skipped (malformed) rows go to `onError` in file order. */
function rowParser(delimiter: Delimiter, onError: (row: CsvRow) => void) {
  let row = 0;
  const options: Options<{ row: number; record: string[] }, string[]> = {
    bom: true, delimiter, relax_column_count: true, relax_quotes: true, skip_empty_lines: true, skip_records_with_error: true,
    on_record: (record) => ({ row: ++row, record }),
    on_skip: (error) => {
      onError({ row: ++row, error: error?.message ?? 'Malformed row' });
      return undefined;
    },
  };
  return parse(options as unknown as Options);
}

/** The rows of a CSV read from `source`, in order, records and errors alike. Holds one batch of parsed rows at most. */
export async function* csvRows(source: AsyncIterable<Buffer>, delimiter: Delimiter): AsyncGenerator<CsvRow> {
  const skipped: CsvRow[] = [];
  const parser = rowParser(delimiter, (row) => skipped.push(row));
  const input = Readable.from(source);
  input.on('error', (error) => parser.destroy(error));
  input.pipe(parser);
  // A skipped row is reported by the parser before the records that follow it, which may still be
  // queued in the stream: each record first lets out the errors of the rows before it.
  for await (const parsed of parser as AsyncIterable<{ row: number; record: string[] }>) {
    while (skipped.length > 0 && skipped[0].row < parsed.row) yield skipped.shift()!;
    yield parsed;
  }
  yield* skipped.splice(0);
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
 * nothing but the header: an upload learns `rows_total` and the header while it is stored.
 */
export class CsvCounter {
  #parser: ReturnType<typeof rowParser> | undefined;
  #head: Buffer[] = [];
  #headSize = 0;
  #summary: CsvSummary = { header: undefined, headerError: undefined, rows: 0, delimiter: ',' };
  #done: Promise<void> | undefined;

  write(piece: Buffer): void {
    if (this.#parser) return void this.#parser.write(piece);
    this.#head.push(piece);
    this.#headSize += piece.length;
    // The delimiter is read from the first line: wait for it (or 64 KiB) before parsing.
    if (this.#headSize >= 65_536 || piece.includes(10)) this.#start();
  }

  #start(): void {
    const head = Buffer.concat(this.#head);
    this.#head = [];
    this.#summary.delimiter = detectDelimiter(head);
    const onRow = (row: CsvRow) => {
      if (row.row === 1) {
        if ('record' in row) this.#summary.header = row.record;
        else this.#summary.headerError = row.error;
      } else {
        this.#summary.rows++;
      }
    };
    const parser = rowParser(this.#summary.delimiter, onRow);
    parser.on('data', onRow);
    this.#done = new Promise((resolve, reject) => {
      parser.on('end', resolve);
      parser.on('error', reject);
    });
    this.#parser = parser;
    parser.write(head);
  }

  async end(): Promise<CsvSummary> {
    if (!this.#parser) this.#start();
    this.#parser!.end();
    await this.#done;
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
