// Baseline (i): nodemailer alone, as the service's SMTP adapter configures it (a pool of 4 sessions,
// every message DKIM-signed with an RSA 2048 key), sending the scenario's messages to the same SMTP
// server with as many sends in flight as the service's workers run. No store, no jobs, no outbox:
// the ceiling of sending mail from Node on this core. Prints `{"seconds": …}` for the sends after the
// first (the pool's sessions are opened by then).
//   node bench/baselines/nodemailer-send.ts '{"port":…,"user":…,"password":…,"count":…,"inFlight":…,"domain":…,"selector":…,"keyFile":…}'
import { readFileSync } from 'node:fs';
import { createTransport } from 'nodemailer';

interface Spec { port: number; user: string; password: string; count: number; inFlight: number; domain: string; selector: string; keyFile: string }

const spec = JSON.parse(process.argv[2]) as Spec;
const transport = createTransport({
  pool: true, maxConnections: 4, maxMessages: 500, host: '127.0.0.1', port: spec.port, secure: false,
  auth: { user: spec.user, pass: spec.password },
});
const dkim = { domainName: spec.domain, keySelector: spec.selector, privateKey: readFileSync(spec.keyFile, 'utf8') };
const send = (i: number) => transport.sendMail({
  messageId: `<bare.${i}.${process.pid}@${spec.domain}>`, from: { name: 'Ada Lovelace', address: `ada@${spec.domain}` }, to: [`r${i}@example.org`],
  subject: `Message ${i}`, text: 'Hello from the bench', headers: { 'List-Unsubscribe': `<https://example.com/public/unsubscribe/${i}>` }, dkim,
});

await send(-1);
const started = performance.now();
let next = 0;
await Promise.all(Array.from({ length: spec.inFlight }, async () => {
  while (next < spec.count) await send(next++);
}));
const seconds = (performance.now() - started) / 1000;
transport.close();
process.stdout.write(JSON.stringify({ seconds }));
