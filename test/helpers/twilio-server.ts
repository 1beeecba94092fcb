// A local server written from Twilio's Programmable Messaging documentation, for the Twilio SMS
// adapter's tests: `POST /2010-04-01/Accounts/{AccountSid}/Messages.json` (form-encoded `To`, `From`,
// `Body`, `StatusCallback`; HTTP Basic authentication by the Account SID and Auth Token) answers 201
// with the Message resource, 401 `{code: 20003}` for wrong credentials, 400 `{code: 21211}` for a
// `To` that is no E.164 number, and its test credentials' magic numbers: +15005550001 (21211, not a
// valid number) and +15005550009 (21614, cannot receive texts). `failNext` makes the next call to a
// number answer a given status. `callback` posts a status callback as Twilio does: form-encoded to
// the text's `StatusCallback`, and `inbound` a text the number received to its messaging webhook,
// each signed `X-Twilio-Signature` (HMAC-SHA1, base64, of the URL followed by
// the parameters sorted by name, each name then value, keyed by the Auth Token).
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TwilioText { sid: string; to: string; from: string; body: string; statusCallback: string; authorization: string }

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
  const failures = new Map<string, number>();
  const server: Server = createServer(async (req, res) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const refuse = (status: number, code: number, message: string) => answer(status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
    const path = `/2010-04-01/Accounts/${accountSid}/Messages.json`;
    if (req.method !== 'POST' || req.url !== path) return refuse(404, 20404, 'The requested resource was not found');
    const authorization = req.headers.authorization ?? '';
    if (authorization !== `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`) return refuse(401, 20003, 'Authenticate');
    const form = Object.fromEntries(new URLSearchParams(await bodyOf(req)));
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
    url, accountSid, authToken, texts,
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
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
