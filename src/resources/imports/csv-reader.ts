// The rows of a CSV as it streams by, parsed by csv-parse, each row numbered as a spreadsheet numbers
// it (the header is row 1) and every row the file holds accounted for: one that cannot be read is an
// error naming its line, never the end of the file, and never takes the rows after it with it.
// - A row that is not UTF-8 is an error (the JSON API refuses such bytes too: nothing is stored as
//   U+FFFD). A UTF-8 BOM at the start is dropped; no other encoding is guessed.
// - A quoted field may hold line breaks. But a quote left open reads on into the rows after it until
//   the next quote; so a row that spans lines is an error when one of its quoted fields ran past its
//   line and the quote that closes it is followed by other text (`"open,1\nada,2\n"bob",3`), when the
//   file ends inside it, or when it grows past MAX_ROW_BYTES. Reading then starts again at the line
//   after the one the row began on, so the lines it swallowed are read as the rows they are. A file
//   with more than MAX_BROKEN_ROWS such rows is given up on (CsvUnreadable).
// A quote that opens and closes oddly within one line is kept as text (csv-parse's `relax_quotes`).
import { isUtf8 } from 'node:buffer';
import { Parser, type CsvError, type InfoRecord } from 'csv-parse';
import { parse as parseAll } from 'csv-parse/sync';

export type Delimiter = ',' | ';' | '\t';

/** The most a row may hold: a quote never closed reads on to the end of the file or this far, no further. */
export const MAX_ROW_BYTES = 1024 * 1024;
/**
 * The most rows of a file that may be unreadable for a quote never closed: each costs a new parser
 * (tens of microseconds), and a file with more is not quoted with `"` at all.
 */
export const MAX_BROKEN_ROWS = 1000;

/** A file the reader gives up on (more than MAX_BROKEN_ROWS rows with a quote never closed). */
export class CsvUnreadable extends Error {}

/** A row of the file: its cells, or why it cannot be read (with the index of the cell at fault, when one is). */
export type CsvRow = { row: number; record: string[] } | { row: number; error: string; column?: number };

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

const isBreak = (byte: number | undefined) => byte === LF || byte === CR;

/**
 * Thrown from a parser's callback to stop it at a row that cannot be read: csv-parse then ends its
 * pass over the piece at once (rather than parsing the rest of it for nothing) and errs with it.
 */
const STOP = new Error('The row cannot be read: reading starts again after its first line');

/** Line breaks (`\n`, `\r\n` or a lone `\r`) in `bytes` from `from` to `to`. */
function lineBreaks(bytes: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (bytes[i] === LF || (bytes[i] === CR && bytes[i + 1] !== LF)) n++;
  return n;
}

/** The offset just past the first line break at or after `from`; -1 when none has arrived yet. */
function afterLine(bytes: Buffer, from: number, final: boolean): number {
  for (let i = from; i < bytes.length; i++) {
    if (bytes[i] === LF) return i + 1;
    if (bytes[i] === CR) return bytes[i + 1] === LF ? i + 2 : i + 1 < bytes.length || final ? i + 1 : -1;
  }
  return final ? bytes.length : -1;
}

/**
 * In a row's bytes, the offset of the quote that closes a quoted field holding a line break but is
 * followed by other text than the delimiter or the line's end: the quote opened was never closed
 * and ran on into the next rows. -1 when every field that spans lines closes as it must. (The
 * quoting rules are csv-parse's with `relax_quotes`: a quote opens a field only at its start, `""`
 * inside is a quote.)
 */
function runOnQuote(bytes: Buffer, delimiter: number): number {
  let atStart = true;
  let quoted = false;
  let spans = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (quoted) {
      if (isBreak(byte)) spans = true;
      else if (byte === QUOTE && bytes[i + 1] === QUOTE) i++;
      else if (byte === QUOTE) {
        const next = bytes[i + 1];
        if (spans && next !== undefined && next !== delimiter && !isBreak(next)) return i;
        quoted = false;
      }
    } else if (byte === delimiter || isBreak(byte)) {
      atStart = true;
    } else {
      quoted = atStart && byte === QUOTE;
      spans = false;
      atStart = false;
    }
  }
  return -1;
}

/** Line breaks before the first line of `text` that is not UTF-8. */
function linesBeforeInvalid(text: Buffer): number {
  for (let from = 0; from < text.length;) {
    const lf = text.indexOf(LF, from);
    const to = lf < 0 ? text.length : lf + 1;
    if (!isUtf8(text.subarray(from, to))) return lineBreaks(text, 0, from);
    from = to;
  }
  return 0;
}

const REPLACEMENT = Buffer.from('\uFFFD');

/** The index of the first cell of a row (`record`, as decoded) that is not UTF-8 in its bytes (`text`). */
function invalidCell(record: string[], text: Buffer, delimiter: Delimiter): number | undefined {
  // The bytes were decoded as U+FFFD: unless the row holds a real one too, the first cell with one is it.
  if (!text.includes(REPLACEMENT)) {
    const index = record.findIndex((cell) => cell.includes('\uFFFD'));
    if (index >= 0) return index;
  }
  try {
    const [cells] = parseAll(text, { delimiter, encoding: null, relax_quotes: true, relax_column_count: true }) as unknown as Buffer[][];
    const index = cells?.findIndex((cell) => !isUtf8(cell)) ?? -1;
    return index < 0 ? undefined : index;
  } catch {
    return undefined; // the row was read once already: only its line is named then
  }
}

const MIB = MAX_ROW_BYTES / (1024 * 1024);

/** Why csv-parse skipped the row starting at `line`. */
function skipped(error: CsvError | undefined): (line: number) => string {
  if (error?.code === 'CSV_QUOTE_NOT_CLOSED') return (line) => `Line ${line}: a quoted field is never closed: the file ends first`;
  if (error?.code === 'CSV_MAX_RECORD_SIZE') return (line) => `Line ${line}: the row exceeds ${MIB} MiB, the most a row may hold (is a quote never closed?)`;
  return (line) => `Line ${line}: ${error?.message ?? 'the row cannot be read'}`;
}

/**
 * Reads the rows of a CSV written to it in pieces (`write`, then `end`), handing each to `onRow` in
 * file order as soon as it is complete. Holds the row being read and the piece being parsed, no more.
 */
export class CsvReader {
  readonly #delimiter: Delimiter;
  readonly #onRow: (row: CsvRow) => void;
  /** The bytes written from offset `#start` on: the row being read, and what follows it. */
  #bytes: Buffer = Buffer.alloc(0);
  #start = 0;
  /** Where the next row begins (the end of the last one read), and its line there. */
  #done = 0;
  #line = 1;
  #row = 0;
  /** The parser reading from offset `#origin`, fed up to `#fed`. */
  #parser: Parser;
  #origin = 0;
  #fed = 0;
  /** The row at `#done` cannot be read, for this reason: reading starts again at its next line. */
  #broken: ((line: number) => string) | undefined;
  /** Bytes are dropped up to the end of the current line (that of a row that cannot be read). */
  #skipping = false;
  #begun = false;
  #brokenRows = 0;
  #failure: Error | undefined;

  constructor(delimiter: Delimiter, onRow: (row: CsvRow) => void) {
    this.#delimiter = delimiter;
    this.#onRow = onRow;
    this.#parser = this.#newParser();
  }

  write(piece: Buffer): void {
    if (this.#failure) throw this.#failure;
    const kept = this.#bytes.subarray(this.#done - this.#start);
    this.#bytes = kept.length > 0 ? Buffer.concat([kept, piece]) : piece;
    this.#start = this.#done;
    // A BOM is known once three bytes have arrived.
    if (!this.#begun && this.#bytes.length < BOM.length) return;
    this.#begin();
    this.#feed(false);
  }

  /** Reads what is left; resolves once every row has been handed over. */
  async end(): Promise<void> {
    if (this.#failure) throw this.#failure;
    this.#begin();
    this.#feed(true);
    for (;;) {
      const parser = this.#parser;
      await new Promise<void>((resolve, reject) => {
        parser.once('finish', resolve).once('error', (error) => (error === STOP ? resolve() : reject(error)));
        parser.end();
      });
      if (!this.#broken) return;
      // Only the end of the file showed that the row cannot be read (a quote never closed).
      this.#resync();
      this.#feed(true);
    }
  }

  #begin(): void {
    if (this.#begun) return;
    this.#begun = true;
    if (this.#bytes.subarray(0, BOM.length).equals(BOM)) this.#restartAt(BOM.length);
  }

  /** Feeds the parser the bytes it has not read; starts a new one after each row that cannot be read. */
  #feed(final: boolean): void {
    for (;;) {
      if (this.#skipping) {
        const next = afterLine(this.#bytes, this.#fed - this.#start, final);
        if (next < 0) {
          this.#done = this.#fed = this.#start + this.#bytes.length;
          return;
        }
        this.#skipping = false;
        this.#restartAt(this.#start + next);
      }
      const unfed = this.#bytes.subarray(this.#fed - this.#start);
      this.#fed += unfed.length;
      if (unfed.length > 0) this.#parser.write(unfed);
      if (this.#failure) throw this.#failure;
      if (!this.#broken) return;
      this.#resync();
    }
  }

  #newParser(): Parser {
    const parser: Parser = new Parser({
      delimiter: this.#delimiter, bom: false, relax_column_count: true, relax_quotes: true, skip_empty_lines: true,
      skip_records_with_error: true, max_record_size: MAX_ROW_BYTES,
      // Rows are taken as they are parsed (none is pushed to the stream): a write hands over every row it completes.
      on_record: (record: string[], { bytes }: InfoRecord) => {
        this.#read(record, this.#origin + bytes);
        if (this.#broken) throw STOP;
        return null;
      },
      on_skip: (error: CsvError | undefined) => {
        this.#broken = skipped(error);
        throw STOP;
      },
    });
    parser.on('error', (error) => {
      if (error !== STOP) this.#failure = error;
    });
    return parser;
  }

  #restartAt(offset: number): void {
    this.#done = this.#origin = this.#fed = offset;
    this.#parser = this.#newParser();
  }

  /** A row parsed, ending at offset `end`: handed over, or found to be a quote left open. */
  #read(record: string[], end: number): void {
    const bytes = this.#bytes;
    const from = this.#done - this.#start;
    const to = end - this.#start;
    let first = from; // the row's first line, after the empty lines before it
    while (first < to && isBreak(bytes[first])) first++;
    const line = this.#line + lineBreaks(bytes, from, first);
    const breaks = lineBreaks(bytes, first, to);
    const text = bytes.subarray(first, to);
    if (breaks > (isBreak(bytes[to - 1]) ? 1 : 0)) {
      const stray = runOnQuote(text, this.#delimiter.charCodeAt(0));
      if (stray >= 0) {
        const closing = line + lineBreaks(text, 0, stray);
        this.#broken = (at) => `Line ${at}: a quoted field is never closed: the quote on line ${closing} that would close it is followed by other text`;
        return;
      }
    }
    this.#done = end;
    this.#line = line + breaks;
    const row = ++this.#row;
    if (isUtf8(text)) return this.#onRow({ row, record });
    this.#onRow({ row, error: `Line ${line + linesBeforeInvalid(text)}: not valid UTF-8 (save the file as UTF-8)`, column: invalidCell(record, text, this.#delimiter) });
  }

  /** Reports the row at `#done` as one that cannot be read, and skips to the line after its first. */
  #resync(): void {
    const reason = this.#broken!;
    this.#broken = undefined;
    const bytes = this.#bytes;
    const from = this.#done - this.#start;
    let first = from;
    while (first < bytes.length && isBreak(bytes[first])) first++;
    const line = this.#line + lineBreaks(bytes, from, first);
    if (++this.#brokenRows > MAX_BROKEN_ROWS) {
      this.#failure = new CsvUnreadable(`Line ${line}: more than ${MAX_BROKEN_ROWS} rows hold a quote that is never closed (is " the file's quote character?)`);
      throw this.#failure;
    }
    this.#onRow({ row: ++this.#row, error: reason(line) });
    this.#line = line + 1;
    this.#done = this.#fed = this.#start + first;
    this.#skipping = true;
  }
}
