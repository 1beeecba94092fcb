// The access log of a real service process: one JSON line per request, naming the request by the id
// its answer carries, written in batches and at exit. Lines of a batch that never filled reach
// stdout when the process stops.
import { describe, expect, it } from 'vitest';
import { afterProcessTests, request, startServer } from './support/server-process.ts';
import { freshStore, orgIn, type FreshStore } from './support/stores.ts';

const stores: FreshStore[] = [];
afterProcessTests(import.meta.filename, stores);

interface AccessLine {
  level: number;
  time: number;
  pid: number;
  hostname: string;
  msg: string;
  reqId: string;
  method: string;
  route: string;
  status: number;
  ms: number;
  org?: string;
}

describe('access log', () => {
  it('writes one line per request, with the id of its answer, by the time the process has stopped', async () => {
    const store = await freshStore('access_log');
    stores.push(store);
    const server = await startServer({ DATABASE_URL: store.url, WORKERS: 'off' });
    const org = await orgIn(store.url);
    const asked = [
      { method: 'GET', path: '/v1/lists', options: { token: org.live_token }, route: '/v1/lists', status: 200, org: org.org_id },
      { method: 'GET', path: '/v1/lists', options: { headers: { 'x-request-id': 'caller-chosen.id:1' } }, route: '/v1/lists', status: 401 },
      { method: 'POST', path: '/v1/lists', options: { token: org.live_token, body: { name: 'Logged', type: 'contacts' } }, route: '/v1/lists', status: 201, org: org.org_id },
      { method: 'GET', path: '/v1/nowhere', options: { token: org.live_token }, route: 'unknown', status: 404, org: org.org_id },
    ];
    const ids: string[] = [];
    for (const { method, path, options, status } of asked) {
      const reply = await request(server.base, method, path, options);
      expect(reply.status, reply.body).toBe(status);
      ids.push(String(reply.headers['x-request-id']));
    }
    expect(ids[1]).toBe('caller-chosen.id:1');
    await server.stop();
    expect(await server.exited).toBe(0);

    const lines = server.output.map((line) => JSON.parse(line) as AccessLine).filter((line) => line.msg === 'request');
    const apiLines = lines.filter((line) => line.route !== '/healthz');
    expect(apiLines.map(({ reqId, method, route, status, org: orgId }) => ({ reqId, method, route, status, org: orgId }))).toEqual(
      asked.map(({ method, route, status, org: orgId }, i) => ({ reqId: ids[i], method, route, status, org: orgId })),
    );
    // In the shape of the service's other lines (pino's), fields in its order.
    const other = server.output.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.msg !== 'request')!;
    for (const line of apiLines) {
      expect(line.ms).toBeGreaterThanOrEqual(0);
      expect(Object.keys(line)).toEqual(['level', 'time', 'pid', 'hostname', 'reqId', 'method', 'route', 'status', 'ms', ...(line.org === undefined ? [] : ['org']), 'msg']);
      expect(line).toMatchObject({ level: other.level, pid: other.pid, hostname: other.hostname });
      expect(Math.abs(line.time - Date.now())).toBeLessThan(60_000);
    }
  });
});
