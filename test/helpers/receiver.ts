// Real local HTTP receivers for webhook deliveries: each records every request it gets (headers and
// raw body) and answers as the test says (a status, after a delay), on a free port of 127.0.0.1.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { afterAll } from 'vitest';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Answer {
  status: number;
  delayMs?: number;
  headers?: Record<string, string>;
  body?: string;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Decides the answer to the n-th request (0-based); 200 by default. */
  answer: (n: number, req: Received) => Answer;
  /** Resolves once `predicate` holds for the requests received, or rejects after `timeoutMs`. */
  until(predicate: (received: Received[]) => boolean, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

const open = new Set<Server>();
afterAll(async () => {
  await Promise.all([...open].map((s) => new Promise((resolve) => {
    s.closeAllConnections();
    s.close(resolve);
  })));
});

export async function receiver(answer: Receiver['answer'] = () => ({ status: 200 })): Promise<Receiver> {
  let count = 0;
  const r = { received: [] as Received[], answer } as Receiver;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      r.received.push(got);
      const a = r.answer(count++, got);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(a.status, { 'content-type': 'text/plain', ...a.headers });
        res.end(a.body ?? (a.status < 300 ? 'ok' : 'failed'));
      };
      if (a.delayMs) setTimeout(send, a.delayMs).unref();
      else send();
    });
  });
  open.add(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.port = (server.address() as { port: number }).port;
  r.url = `http://127.0.0.1:${r.port}/hook`;
  r.until = async (predicate, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(r.received)) {
      if (Date.now() > deadline) throw new Error(`receiver: condition not met within ${timeoutMs} ms (${r.received.length} requests received)`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return r.received;
  };
  r.close = () => new Promise((resolve) => {
    open.delete(server);
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return r;
}

/** The event ids of the requests received (their `webhook-id` headers). */
export const ids = (received: Received[]) => received.map((x) => String(x.headers['webhook-id']));
