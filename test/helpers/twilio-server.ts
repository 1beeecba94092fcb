// A local server written from Twilio's Programmable Messaging and Voice documentation, for the Twilio
// adapters' tests. Messaging: `POST /2010-04-01/Accounts/{AccountSid}/Messages.json` (form-encoded `To`, `From`,
// `Body`, `StatusCallback`; HTTP Basic authentication by the Account SID and Auth Token) answers 201
// with the Message resource, 401 `{code: 20003}` for wrong credentials, 400 `{code: 21211}` for a
// `To` that is no E.164 number, and its test credentials' magic numbers: +15005550001 (21211, not a
// valid number) and +15005550009 (21614, cannot receive texts). `failNext` makes the next call to a
// number answer a given status. `callback` posts a status callback as Twilio does: form-encoded to
// the text's `StatusCallback`, and `inbound` a text the number received to its messaging webhook,
// each signed `X-Twilio-Signature` (HMAC-SHA1, base64, of the URL followed by
// the parameters sorted by name, each name then value, keyed by the Auth Token). Voice: `POST
// …/Calls.json` (`To`, `From`, `Twiml` or `Url`, `StatusCallback`, `StatusCallbackEvent` repeated,
// `MachineDetection`) answers 201 with the Call resource (`status: queued`), `POST …/Calls/{sid}.json`
// with `Status=canceled|completed` ends it (21220 when it already ended), `GET …/Calls/{sid}.json`
// answers it; `callStatus` posts a call's status callback (`CallSid`, `CallStatus`, `AnsweredBy`,
// `CallDuration`), signed the same way, and `setCall` sets what the Call resource says.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { testApp } from './app.ts';

export interface TwilioText { sid: string; to: string; from: string; body: string; statusCallback: string; authorization: string }
export interface TwilioCall {
  sid: string; to: string; from: string; twiml: string; statusCallback: string; events: string[]; machineDetection: string;
  /** What the Call resource says now (`GET`), and the hang-ups asked. */
  status: string; answeredBy: string | null; duration: string | null; updates: string[];
}
const ENDED = new Set(['completed', 'busy', 'no-answer', 'failed', 'canceled']);

export const twilioSignatureOf = (authToken: string, url: string, params: Record<string, string>) =>
  createHmac('sha1', authToken).update(url + Object.keys(params).sort().map((k) => k + params[k]).join('')).digest('base64');

const MAGIC: Record<string, [number, string]> = {
  '+15005550001': [21211, "The 'To' number +15005550001 is not a valid phone number."],
  '+15005550009': [21614, "'To' number is not a valid mobile number"],
};

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startTwilio(accountSid = `AC${randomBytes(16).toString('hex')}`, authToken = randomBytes(16).toString('hex')) {
  const texts: TwilioText[] = [];
  const calls: TwilioCall[] = [];
  const failures = new Map<string, number>();
  const server: Server = createServer(async (req, res) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const refuse = (status: number, code: number, message: string) => answer(status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
    const base = `/2010-04-01/Accounts/${accountSid}`;
    const authorization = req.headers.authorization ?? '';
    if (authorization !== `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`) return refuse(401, 20003, 'Authenticate');
    const raw = new URLSearchParams(await bodyOf(req));
    const form = Object.fromEntries(raw);
    const callResource = (call: TwilioCall) => ({
      sid: call.sid, account_sid: accountSid, to: call.to, from: call.from, status: call.status, answered_by: call.answeredBy, duration: call.duration,
      direction: 'outbound-api', uri: `${base}/Calls/${call.sid}.json`,
    });
    if (req.method === 'POST' && req.url === `${base}/Calls.json`) {
      if (!/^\+[1-9]\d{6,14}$/.test(form.To ?? '')) return refuse(400, 21211, `The 'To' number ${form.To} is not a valid phone number.`);
      if (!form.Twiml && !form.Url) return refuse(400, 21205, 'Url parameter is required.');
      const call: TwilioCall = {
        sid: `CA${randomBytes(16).toString('hex')}`, to: form.To, from: form.From, twiml: form.Twiml ?? '', statusCallback: form.StatusCallback, events: raw.getAll('StatusCallbackEvent'),
        machineDetection: form.MachineDetection ?? '', status: 'queued', answeredBy: null, duration: null, updates: [],
      };
      calls.push(call);
      return answer(201, callResource(call));
    }
    const one = new RegExp(`^${base}/Calls/(CA[0-9a-f]{32})\\.json$`).exec(req.url ?? '');
    const call = one ? calls.find((c) => c.sid === one[1]) : undefined;
    if (one && !call) return refuse(404, 20404, 'The requested resource was not found');
    if (call && req.method === 'GET') return answer(200, callResource(call));
    if (call && req.method === 'POST') {
      if (ENDED.has(call.status)) return refuse(400, 21220, 'Call is not in-progress. Cannot redirect.');
      call.updates.push(form.Status);
      call.status = form.Status;
      return answer(200, callResource(call));
    }
    if (req.method !== 'POST' || req.url !== `${base}/Messages.json`) return refuse(404, 20404, 'The requested resource was not found');
    const failing = failures.get(form.To);
    if (failing) {
      failures.delete(form.To);
      return refuse(failing, failing === 429 ? 20429 : 20500, failing === 429 ? 'Too Many Requests' : 'Internal Server Error');
    }
    if (!/^\+[1-9]\d{6,14}$/.test(form.To ?? '')) return refuse(400, 21211, `The 'To' number ${form.To} is not a valid phone number.`);
    if (MAGIC[form.To]) return refuse(400, ...MAGIC[form.To]);
    if (!form.Body) return refuse(400, 21602, 'Message body is required.');
    const sid = `SM${randomBytes(16).toString('hex')}`;
    texts.push({ sid, to: form.To, from: form.From, body: form.Body, statusCallback: form.StatusCallback, authorization });
    answer(201, {
      sid, account_sid: accountSid, to: form.To, from: form.From, body: form.Body, status: 'queued', num_segments: '1', direction: 'outbound-api',
      date_created: new Date().toUTCString(), error_code: null, error_message: null, uri: `/2010-04-01/Accounts/${accountSid}/Messages/${sid}.json`,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url, accountSid, authToken, texts, calls,
    /** The next text to `to` is answered `status` (429, 500, 503…) and not taken. */
    failNext(to: string, status: number) {
      failures.set(to, status);
    },
    /** Posts the status callback of `text` as Twilio does; `tamper` changes a parameter after signing. */
    async callback(text: TwilioText, status: string, extra: Record<string, string> = {}, tamper = false): Promise<Response> {
      const params: Record<string, string> = {
        AccountSid: accountSid, MessageSid: text.sid, SmsSid: text.sid, MessageStatus: status, SmsStatus: status, To: text.to, From: text.from, ApiVersion: '2010-04-01', ...extra,
      };
      const signature = twilioSignatureOf(authToken, text.statusCallback, params);
      if (tamper) params.MessageStatus = 'delivered';
      return fetch(text.statusCallback, {
        method: 'POST', body: new URLSearchParams(params).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature, 'i-twilio-idempotency-token': randomBytes(8).toString('hex') },
      });
    },
    /** Posts a text the number received to its messaging webhook `url`, as Twilio does (signed). */
    async inbound(url: string, text: { sid?: string; from: string; to: string; body: string }): Promise<Response> {
      const sid = text.sid ?? `SM${randomBytes(16).toString('hex')}`;
      const params: Record<string, string> = {
        AccountSid: accountSid, MessageSid: sid, SmsMessageSid: sid, SmsSid: sid, From: text.from, To: text.to, Body: text.body, NumMedia: '0', NumSegments: '1', SmsStatus: 'received', ApiVersion: '2010-04-01',
      };
      return fetch(url, {
        method: 'POST', body: new URLSearchParams(params).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignatureOf(authToken, url, params) },
      });
    },
    /** Posts a call's status callback as Twilio does; `tamper` changes a parameter after signing. */
    async callStatus(call: TwilioCall, status: string, extra: Record<string, string> = {}, tamper = false): Promise<Response> {
      const params: Record<string, string> = {
        AccountSid: accountSid, CallSid: call.sid, CallStatus: status, To: call.to, From: call.from, Direction: 'outbound-api', ApiVersion: '2010-04-01', ...extra,
      };
      const signature = twilioSignatureOf(authToken, call.statusCallback, params);
      if (tamper) params.CallStatus = 'completed';
      return fetch(call.statusCallback, {
        method: 'POST', body: new URLSearchParams(params).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
      });
    },
    /** Sets what the Call resource says (what a `GET` answers), as if the call had moved on. */
    setCall(call: TwilioCall, status: string, answeredBy: string | null = null, duration: string | null = null) {
      Object.assign(call, { status, answeredBy, duration });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A test file's app listening on its PUBLIC_URL (the callback URLs it gives Twilio lead to it) beside
 * a local Twilio: both started for the file and closed after it, private addresses allowed.
 */
export async function appWithTwilio(): Promise<{ app: FastifyInstance; twilio: Awaited<ReturnType<typeof startTwilio>>; publicUrl: string }> {
  const port = await new Promise<number>((resolve) => {
    const probe = createNetServer().listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as AddressInfo;
      probe.close(() => resolve(free));
    });
  });
  const publicUrl = `http://127.0.0.1:${port}`;
  const twilio = await startTwilio();
  const app = await testApp({ env: { PUBLIC_URL: publicUrl, OUTBOUND_ALLOW_PRIVATE: 'true', RATE_LIMIT_PER_SECOND: '100000', RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_SECOND: '100000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000' } });
  beforeAll(() => app.listen({ port, host: '127.0.0.1' }));
  afterAll(async () => {
    await app.close();
    await twilio.close();
  });
  return { app, twilio, publicUrl };
}
