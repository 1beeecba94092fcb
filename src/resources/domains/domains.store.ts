// What sending domains do beyond the kernel's records (domains.resource.ts): the checks of a new
// domain's name, and its DKIM key pair, made before the write (outside its transaction: an RSA key
// takes tens of milliseconds to make) and handed to the write by the body it was made for.
import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import type { FastifyRequest } from 'fastify';
import { seal } from '../../platform/sealing.ts';
import type { WriteContext } from '../../platform/write.ts';
import { DKIM_SELECTOR, recordsFor } from './dns-records.ts';
import { checkedDomain, parseDomain } from './domain-names.ts';

const newKeyPair = promisify(generateKeyPair);

/** The columns a new domain gets from its key pair: never part of its API form. */
interface Prepared {
  dkim_selector: string;
  dkim_public_key: string;
  dkim_private_key: string;
  records: string;
}

const prepared = new WeakMap<object, Prepared>();

/** An RSA 2048 key pair: the public key as a DKIM record holds it (base64 of its DER form), the private one as PEM. */
export async function dkimKeyPair(): Promise<{ publicKey: string; privateKey: string }> {
  const { publicKey, privateKey } = await newKeyPair('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { publicKey: publicKey.toString('base64'), privateKey };
}

/**
 * Before a create: the domain name in its stored form (or 422), and its key pair, the private key
 * sealed under the service's secret at once (the plain key lives only in this function).
 */
export async function prepareDomain(req: FastifyRequest, input: Record<string, unknown>): Promise<void> {
  if (typeof input.domain !== 'string') return;
  const domain = input.domain = checkedDomain(input.domain);
  const { publicKey, privateKey } = await dkimKeyPair();
  const { secret, config } = req.server.services;
  prepared.set(input, {
    dkim_selector: DKIM_SELECTOR,
    dkim_public_key: publicKey,
    dkim_private_key: seal(secret, privateKey),
    records: JSON.stringify(recordsFor(domain, publicKey, config)),
  });
}

export async function beforeWrite(_w: WriteContext, row: Record<string, unknown>, { before, input }: { before?: unknown; input: Record<string, unknown> }): Promise<void> {
  if (before) return;
  const made = prepared.get(input);
  if (!made) throw new Error('A sending domain is created through its route, which makes its key pair first');
  Object.assign(row, made);
}

/** The `domain` filter compares the stored form: `Bücher.de.` finds `xn--bcher-kva.de`. */
export function domainFilter(value: string): string | null {
  const parsed = parseDomain(value);
  return 'domain' in parsed ? parsed.domain : null;
}
