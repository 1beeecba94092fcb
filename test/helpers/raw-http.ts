// Raw HTTP/1.1 over a TCP socket, for what no HTTP client sends: malformed request lines, stalled and
// trickled bodies, hang-ups, missing Host. Answers are parsed just enough to check them.
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RawReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Milliseconds from opening the connection to the complete answer. */
  ms: number;
  json(): Record<string, unknown>;
}

export class RawConnection {
  readonly socket: Socket;
  readonly opened = Date.now();
  /** Resolves with the milliseconds from opening to the server closing the connection. */
  readonly closed: Promise<number>;
  #data = '';
  #waiters: Array<() => void> = [];

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.#data += chunk;
      this.#wake();
    });
    socket.on('error', () => {});
    this.closed = new Promise((resolve) => socket.on('close', () => {
      resolve(Date.now() - this.opened);
      this.#wake();
    }));
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  get text(): string {
    return this.#data;
  }

  write(text: string): void {
    if (!this.socket.destroyed) this.socket.write(text);
  }

  /** Writes `text` one character at a time, `everyMs` apart, until the server closes or it is all sent. */
  async trickle(text: string, everyMs: number): Promise<void> {
    for (const char of text) {
      if (this.socket.destroyed || this.socket.readableEnded) return;
      this.write(char);
      await sleep(everyMs);
    }
  }

  #wake(): void {
    for (const waiter of this.#waiters.splice(0)) waiter();
  }

  /** Resolves once `predicate` holds on the data received, or rejects after `timeoutMs`. */
  async until(predicate: (data: string) => boolean, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.#data)) {
      if (this.socket.destroyed && this.socket.readableEnded && !predicate(this.#data)) throw new Error(`closed without the expected data: ${this.#data.slice(0, 300)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no expected data within ${timeoutMs} ms: ${this.#data.slice(0, 300)}`);
      await Promise.race([new Promise<void>((resolve) => this.#waiters.push(resolve)), sleep(Math.min(left, 100))]);
    }
  }

  /** The first complete answer (with a Content-Length) on the connection. */
  async response(timeoutMs = 30_000): Promise<RawReply> {
    await this.until((data) => parse(data) !== undefined, timeoutMs);
    const reply = parse(this.#data) as Omit<RawReply, 'ms'>;
    return { ...reply, ms: Date.now() - this.opened };
  }

  close(): void {
    this.socket.destroy();
  }
}

function parse(data: string): Omit<RawReply, 'ms'> | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = data.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length']);
  const body = data.slice(end + 4);
  if (!Number.isFinite(length) || Buffer.byteLength(body) < length) return undefined;
  return { status: Number(statusLine.split(' ')[1]), headers, body, json: () => JSON.parse(body) };
}

/** Sends one raw request on a new connection and returns its answer and when the server closed. */
export async function rawRequest(port: number, text: string): Promise<RawReply & { closedAfterMs: Promise<number> }> {
  const connection = await RawConnection.open(port);
  connection.write(text);
  const reply = await connection.response();
  connection.closed.finally(() => undefined);
  setTimeout(() => connection.close(), 5000).unref();
  return { ...reply, closedAfterMs: connection.closed };
}
