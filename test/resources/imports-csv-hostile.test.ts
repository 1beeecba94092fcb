// CSV imports of broken and hostile files through HTTP, on the suite's store: bytes that are not
// UTF-8 (the row failed, naming its line and column; in the header, the file refused), a BOM, quotes
// left open (an error at the line the row began on, the lines after it read as the rows they are),
// rows past the size limit, and the errors CSV written for a spreadsheet.
import { parse } from 'csv-parse/sync';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenant, testApp } from '../helpers/app.ts';
import { upload, waitFor } from '../helpers/imports.ts';
import { runImport } from '../../src/resources/imports/imports.jobs.ts';
import { jobsByHand } from '../helpers/jobs-by-hand.ts';

let app: FastifyInstance;
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => {
  await app.close();
});

type T = Awaited<ReturnType<typeof tenant>>;

const MAPPING = { Email: 'work_email', Name: 'name' };

/** Byte sequences that are not UTF-8, each as the campaign or the standard names it. */
const INVALID: Record<string, number[]> = {
  'FF FE C3 28': [0xff, 0xfe, 0xc3, 0x28],
  'CESU surrogate ED A0 80': [0xed, 0xa0, 0x80],
  'overlong / C0 AF': [0xc0, 0xaf],
  'overlong NUL C0 80': [0xc0, 0x80],
  'overlong / E0 80 AF': [0xe0, 0x80, 0xaf],
  'past U+10FFFF F4 90 80 80': [0xf4, 0x90, 0x80, 0x80],
  'lone continuation 80': [0x80],
  'cut short E2 82': [0xe2, 0x82],
};

const bytes = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));

async function listOf(t: T): Promise<string> {
  const res = await t.live.post('/v1/lists', { name: 'Imported', type: 'contacts' });
  expect(res.statusCode).toBe(201);
  return res.json().data.id as string;
}

/** Uploads `csv` as contacts onto a new list, waits for the import to end: the import as created and as ended, its errors, its contacts. */
async function importOf(t: T, csv: string | Buffer, mapping: Record<string, string> = MAPPING) {
  const listId = await listOf(t);
  const res = await upload(app, t.live_token, { csv, fields: { object: 'contacts', list_id: listId, mapping } });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().data.id as string;
  const done = await waitFor(app, t.live_token, `/v1/imports/${id}`, undefined, 60_000);
  const errors = (await t.live.get(`/v1/imports/${id}/errors?limit=100`)).json().data as Array<{ row: number; column: string | null; message: string }>;
  const contacts = (await t.live.get(`/v1/contacts?list_id=${listId}&limit=100`)).json().data as Array<{ work_email: string | null; name: string | null }>;
  return { id, created: res.json().data as Record<string, unknown>, done, errors, contacts };
}

describe('CSV imports of bytes that are not UTF-8', () => {
  it('fail each such row, naming its line and column, store no replacement character, and import the rest', async () => {
    const t = await tenant(app, { sandbox: false });
    const names = Object.keys(INVALID);
    // A BOM first (accepted and dropped); each invalid row follows a valid one holding non-ASCII text.
    const csv = bytes('\uFEFFEmail,Name\n', ...names.flatMap((name, i) => [`ok${i}@example.com,Zoë ${i} 東京\n`, `bad${i}@example.com,Ada `, INVALID[name], ` ${i}\n`]));
    const { created, done, errors, contacts } = await importOf(t, csv);
    expect(created).toMatchObject({ rows_total: 2 * names.length, mapping: MAPPING });
    expect(done).toMatchObject({ status: 'completed_with_errors', rows_processed: 2 * names.length, created: names.length, failed: names.length });
    expect(errors).toEqual(names.map((_, i) => ({ row: 3 + 2 * i, column: 'Name', message: `Line ${3 + 2 * i}: not valid UTF-8 (save the file as UTF-8)` })));
    expect(contacts.map((c) => [c.work_email, c.name]).sort()).toEqual(names.map((_, i) => [`ok${i}@example.com`, `Zoë ${i} 東京`]).sort());
    expect(JSON.stringify(contacts)).not.toContain('\uFFFD');
    // The JSON API refuses the same bytes.
    for (const name of names) {
      const res = await app.inject({
        method: 'POST', url: '/v1/contacts', payload: bytes('{"name": "Ada ', INVALID[name], '", "list_id": "', String(done.list_id), '"}'),
        headers: { authorization: `Bearer ${t.live_token}`, 'content-type': 'application/json' },
      });
      expect(res.statusCode, name).toBe(400);
    }
  });

  it('name the line a bad cell is on in a row that spans lines', async () => {
    const t = await tenant(app, { sandbox: false });
    const csv = bytes('Email,Name\r\n"a@example.com","Ada\r\nLovelace"\r\nb@example.com,"Grace\r\n', INVALID['CESU surrogate ED A0 80'], ' Hopper"\r\n');
    const { done, errors, contacts } = await importOf(t, csv);
    expect(done).toMatchObject({ rows_total: 2, created: 1, failed: 1 });
    expect(errors).toEqual([{ row: 3, column: 'Name', message: 'Line 5: not valid UTF-8 (save the file as UTF-8)' }]);
    expect(contacts.map((c) => c.name)).toEqual(['Ada\r\nLovelace']);
  });

  it('refuse the file with 400 naming the line when they are in the header, storing nothing', async () => {
    const t = await tenant(app, { sandbox: false });
    const listId = await listOf(t);
    const headers = [
      ...Object.values(INVALID).map((seq) => ({ csv: bytes('Em', seq, 'ail,Name\nada@example.com,Ada\n'), line: 1 })),
      // A UTF-16 BOM is no UTF-8: such a file is refused, never read as another encoding.
      { csv: Buffer.from('\uFEFFEmail,Name\n', 'utf16le'), line: 1 },
      { csv: bytes('\n\nEmail,', INVALID['FF FE C3 28'], '\n'), line: 3 },
    ];
    for (const { csv, line } of headers) {
      const res = await upload(app, t.live_token, { csv, fields: { object: 'contacts', list_id: listId } });
      expect(res.statusCode, csv.toString('hex')).toBe(400);
      expect(res.json(), csv.toString('hex')).toEqual({ type: 'bad_request', detail: `The header row is malformed: Line ${line}: not valid UTF-8 (save the file as UTF-8)` });
    }
    expect((await t.live.get('/v1/imports')).json().pagination.total).toBe(0);
  });
});

describe('CSV imports of quotes left open', () => {
  it('report the row as an error at its line and read the rows it ran into (the quote closed by a later one)', async () => {
    const t = await tenant(app, { sandbox: false });
    const csv = [
      'Email,Name',
      'ok1@example.com,One',
      '"open@example.com,Two', // line 3: the quote runs on to the first quote of line 5
      'ok3@example.com,Three',
      '"ok4@example.com",Four',
      'ok5@example.com,Five',
    ].join('\n');
    const { created, done, errors, contacts } = await importOf(t, csv);
    expect(created.rows_total).toBe(5);
    expect(done).toMatchObject({ status: 'completed_with_errors', rows_total: 5, rows_processed: 5, created: 4, failed: 1 });
    expect(errors).toEqual([{ row: 3, column: null, message: 'Line 3: a quoted field is never closed: the quote on line 5 that would close it is followed by other text' }]);
    expect(contacts.map((c) => c.work_email).sort()).toEqual(['ok1@example.com', 'ok3@example.com', 'ok4@example.com', 'ok5@example.com']);
  });

  it('report a quote never closed before the end of the file, in a file with quoted line breaks and CRLF lines', async () => {
    const t = await tenant(app, { sandbox: false });
    const csv = [
      'Email,Name',
      '"ada@example.com","Ada', // lines 2-3: one row, a quoted line break
      'Lovelace"',
      'ok2@example.com,"Two', // line 4 (row 3): never closed
      'ok3@example.com,Three',
      '',
      'ok4@example.com,Four',
    ].join('\r\n');
    const { created, done, errors, contacts } = await importOf(t, csv);
    expect(created.rows_total).toBe(4);
    expect(done).toMatchObject({ status: 'completed_with_errors', rows_total: 4, created: 3, failed: 1 });
    expect(errors).toEqual([{ row: 3, column: null, message: 'Line 4: a quoted field is never closed: the file ends first' }]);
    expect(contacts.map((c) => [c.work_email, c.name]).sort()).toEqual([['ada@example.com', 'Ada\r\nLovelace'], ['ok3@example.com', 'Three'], ['ok4@example.com', 'Four']]);
  });

  it('end a row at 1 MiB: a quote left open is an error there, and every row it ran into is read', async () => {
    const t = await tenant(app, { sandbox: false });
    // 11,000 rows of 100 bytes after the quote left open on line 3: more than 1 MiB, no quote among them.
    const filler = Array.from({ length: 11_000 }, (_, i) => `not-an-email-${String(i).padStart(5, '0')},${'x'.repeat(80)}`);
    const long = `long@example.com,${'y'.repeat(1024 * 1024)}`; // one line past the limit
    const csv = ['Email,Name', 'ok1@example.com,One', '"open@example.com,Open', ...filler, long, 'last@example.com,Last'].join('\n');
    const { created, done, errors, contacts } = await importOf(t, csv);
    const rows = 2 + filler.length + 2;
    expect(created.rows_total).toBe(rows);
    expect(done).toMatchObject({ status: 'completed_with_errors', rows_total: rows, rows_processed: rows, created: 2, failed: rows - 2 });
    expect(errors[0]).toEqual({ row: 3, column: null, message: 'Line 3: the row exceeds 1 MiB, the most a row may hold (is a quote never closed?)' });
    expect(errors[1]).toMatchObject({ row: 4, column: 'Email', message: 'value is not a valid email address' });
    expect((await t.live.get(`/v1/imports/${done.id as string}/errors?limit=1`)).json().pagination.total).toBe(rows - 2);
    const tail = (await t.live.get(`/v1/imports/${done.id as string}/errors.csv`)).body.trim().split('\r\n').at(-1);
    expect(tail).toBe(`${rows},,"Line ${rows}: the row exceeds 1 MiB, the most a row may hold (is a quote never closed?)"`);
    expect(contacts.map((c) => c.work_email).sort()).toEqual(['last@example.com', 'ok1@example.com']);
  });
});

describe('CSV imports of files that are not quoted with "', () => {
  // Each line opens a quote the next one closes with other text after it: every row is unreadable.
  const openQuotes = (n: number) => Array.from({ length: n }, (_, i) => `"open${i}@example.com,Open`);
  const REFUSED = 'more than 1000 rows hold a quote that is never closed (is " the file\'s quote character?)';

  it('read up to 1000 rows with a quote never closed, each an error', async () => {
    const t = await tenant(app, { sandbox: false });
    const csv = ['Email,Name', ...openQuotes(1000), 'ok@example.com,Ok'].join('\n');
    const { done, errors } = await importOf(t, csv);
    expect(done).toMatchObject({ status: 'completed_with_errors', rows_total: 1001, created: 1, failed: 1000 });
    expect(errors[0]).toEqual({ row: 2, column: null, message: 'Line 2: a quoted field is never closed: the quote on line 3 that would close it is followed by other text' });
  });

  it('refuse a file with more (400), storing nothing', async () => {
    const t = await tenant(app, { sandbox: false });
    const listId = await listOf(t);
    const started = performance.now();
    const res = await upload(app, t.live_token, { csv: ['Email,Name', ...openQuotes(200_000)].join('\n'), fields: { object: 'contacts', list_id: listId } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ type: 'bad_request', detail: `The file is not readable as CSV: Line 1002: ${REFUSED}` });
    // It is refused as soon as the rows show it, not after a parser for each of 200,000 rows.
    expect(performance.now() - started).toBeLessThan(5000);
    expect((await t.live.get('/v1/imports')).json().pagination.total).toBe(0);
  });

  describe('stored before they were refused', () => {
    let quiet: FastifyInstance;
    jobsByHand({ file: () => app, rebuilt: (a) => (app = a), quiet: (a) => (quiet = a) });

    it('fail the import saying why, keeping the rows read before', async () => {
      const t = await tenant(quiet, { sandbox: false });
      const listId = (await t.live.post('/v1/lists', { name: 'Imported', type: 'contacts' })).json().data.id as string;
      const id = (await upload(quiet, t.live_token, { csv: 'Email,Name\nstored@example.com,Stored\n', fields: { object: 'contacts', list_id: listId } })).json().data.id as string;
      // The stored file becomes one the upload would refuse (as one stored before the limit was).
      const csv = ['Email,Name', 'a@example.com,A', 'b@example.com,B', ...openQuotes(1001)].join('\n');
      await quiet.services.database.db.updateTable('file_chunks').set({ data: Buffer.from(csv) }).where('org_id', '=', t.org_id).where('file_id', '=', id).execute();
      await runImport(quiet.services.database, { orgId: t.org_id, mode: 'live' }, id, { batchRows: 500 });
      const ended = (await t.live.get(`/v1/imports/${id}`)).json().data;
      expect(ended).toMatchObject({ status: 'failed', rows_processed: 1002, created: 2, failed: 1000, error: `The file is not readable as CSV: Line 1004: ${REFUSED}` });
      expect((await t.live.get(`/v1/contacts?list_id=${listId}`)).json().data.map((c: { work_email: string }) => c.work_email).sort()).toEqual(['a@example.com', 'b@example.com']);
    });
  });
});

describe('the errors CSV of an import', () => {
  it('writes a header or message a spreadsheet would read as a formula behind a quote', async () => {
    const t = await tenant(app, { sandbox: false });
    const header = '=HYPERLINK("http://x","c")';
    const csv = `"${header.replace(/"/g, '""')}",Name\nnot-an-email,Ada\n`;
    const { id, done } = await importOf(t, csv, { [header]: 'work_email', Name: 'name' });
    expect(done).toMatchObject({ failed: 1 });
    const file = (await t.live.get(`/v1/imports/${id}/errors.csv`)).body;
    expect(parse(file)).toEqual([['row', 'column', 'message'], ['2', `'${header}`, 'value is not a valid email address']]);
  });
});
