// Files kept in the store (an import's upload, an export's CSV) as rows of about 1 MiB: every process
// on the store can read what any other wrote, and a file never has to fit in memory: it is written
// chunk by chunk as it arrives and read back one chunk at a time.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { Scope } from '../../platform/scope.ts';
import { deleteIn, selectIn, tenantOf } from '../../platform/resource/tenancy.ts';

export const CHUNK_BYTES = 1024 * 1024;

/** Collects bytes and writes them as numbered chunks of CHUNK_BYTES (the last one shorter). */
export class ChunkWriter {
  readonly #db: Kysely<DB>;
  readonly #scope: Scope;
  readonly #fileId: string;
  #pending: Buffer[] = [];
  #size = 0;
  #seq = 0;
  bytes = 0;

  constructor(db: Kysely<DB>, scope: Scope, fileId: string) {
    this.#db = db;
    this.#scope = scope;
    this.#fileId = fileId;
  }

  async write(piece: Buffer): Promise<void> {
    this.#pending.push(piece);
    this.#size += piece.length;
    this.bytes += piece.length;
    while (this.#size >= CHUNK_BYTES) {
      const all = Buffer.concat(this.#pending);
      await this.#insert(all.subarray(0, CHUNK_BYTES));
      const rest = all.subarray(CHUNK_BYTES);
      this.#pending = rest.length > 0 ? [Buffer.from(rest)] : [];
      this.#size = rest.length;
    }
  }

  /** Writes what is left. */
  async end(): Promise<void> {
    if (this.#size > 0) await this.#insert(Buffer.concat(this.#pending));
    this.#pending = [];
    this.#size = 0;
  }

  async #insert(data: Buffer): Promise<void> {
    await this.#db.insertInto('file_chunks').values({ ...tenantOf(this.#scope), file_id: this.#fileId, seq: this.#seq++, data }).execute();
  }
}

/** The bytes of a stored file, one chunk read at a time. */
export async function* readFile(db: Kysely<DB>, scope: Scope, fileId: string): AsyncGenerator<Buffer> {
  for (let seq = 0; ; seq++) {
    const chunk = await selectIn(db, 'file_chunks', scope).select('data').where('file_id', '=', fileId).where('seq', '=', seq).executeTakeFirst();
    if (!chunk) return;
    yield Buffer.from(chunk.data);
  }
}

export async function deleteFile(db: Kysely<DB>, scope: Scope, fileId: string): Promise<void> {
  await deleteIn(db, 'file_chunks', scope).where('file_id', '=', fileId).execute();
}
