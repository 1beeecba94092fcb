// Scenario 18: a CSV import of many contacts (1,000,000 by default, 20,000 quick) through the
// running service as a user makes one: the file streamed up as multipart, the rows written by the
// service's own workers in batches. Reports rows per second from the upload's answer to the
// import's end (polled every 100 ms) and the service's peak RSS over the import.
import { createWriteStream, openAsBlob } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import type { Server } from './processes.ts';

export interface ImportResults {
  s18_csv_import: { rows: number; fileMb: number; seconds: number; rowsPerSecond: number; peakRssMb: number; created: number; failed: number; status: string };
}

/** Writes a CSV of `rows` contacts (a BOM-less, comma-separated export a CRM would give). */
async function writeCsv(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path);
  const line = (i: number) => `person.${i}@import.example,Person ${i},${['CTO', 'VP Sales', 'Engineer', 'Founder'][i % 4]},"Analytical Engines, Ltd ${i % 1000}",${['gold', 'silver', 'bronze'][i % 3]}\n`;
  out.write('Email,Name,Job Title,Company,Plan\n');
  for (let i = 0; i < rows; i++) {
    if (!out.write(line(i))) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

export async function importScenario(service: Server, token: string, listId: string, workDir: string, rows: number): Promise<ImportResults> {
  const file = join(workDir, `import-${rows}.csv`);
  await writeCsv(file, rows);
  const blob = await openAsBlob(file, { type: 'text/csv' });
  const form = new FormData();
  form.append('object', 'contacts');
  form.append('list_id', listId);
  form.append('mode', 'create');
  form.append('mapping', JSON.stringify({ Email: 'work_email', Name: 'name', 'Job Title': 'title', Company: 'company', Plan: 'custom_fields.plan' }));
  form.append('file', blob, 'people.csv');
  const headers = { authorization: `Bearer ${token}` };
  const field = await fetch(`${service.url}/v1/fields`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ object: 'contacts', name: 'plan', data_type: 'text' }) });
  if (field.status !== 201) throw new Error(`import field: ${field.status} ${await field.text()}`);
  await service.resetStats();
  const answer = await fetch(`${service.url}/v1/imports`, { method: 'POST', headers, body: form });
  if (answer.status !== 201) throw new Error(`import upload: ${answer.status} ${await answer.text()}`);
  const started = performance.now();
  const { data } = await answer.json() as { data: { id: string } };
  let state: { status: string; created: number; failed: number; rows_processed: number };
  for (;;) {
    const res = await fetch(`${service.url}/v1/imports/${data.id}`, { headers });
    state = (await res.json() as { data: typeof state }).data;
    if (!['queued', 'running'].includes(state.status)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const seconds = (performance.now() - started) / 1000;
  const stats = await service.stats();
  return {
    s18_csv_import: {
      rows, fileMb: Math.round(blob.size / 1e5) / 10, seconds: Math.round(seconds * 10) / 10, rowsPerSecond: Math.round(state.created / seconds),
      peakRssMb: Math.round(stats.peakRssBytes / 1e5) / 10, created: state.created, failed: state.failed, status: state.status,
    },
  };
}
