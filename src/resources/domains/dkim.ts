// The DKIM key the mail sender signs a message with: that of the tenant's verified sending domain
// matching the From address's domain, in the shape of nodemailer's `dkim` option. A domain not
// added, not verified (yet, or any more) or of another tenant signs nothing.
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { selectIn } from '../../platform/resource/tenancy.ts';
import type { Scope } from '../../platform/scope.ts';
import { unseal } from '../../platform/sealing.ts';
import { SANDBOX_DKIM_PRIVATE_KEY, SANDBOX_KEY_MARKER } from '../sandbox/sandbox.domains.ts';
import { domainOf } from './domain-names.ts';

export interface DkimKey {
  domainName: string;
  keySelector: string;
  /** PEM (PKCS #8): never logged, stored or answered. */
  privateKey: string;
}

/**
 * The signing key for mail from `fromAddressDomain` (a domain, or a whole address: its part after
 * the last @), or undefined when the tenant has no verified sending domain of that name. `secret` is
 * the service's (`app.services.secret`), which sealed the key.
 */
export async function dkimKeyFor(db: Kysely<DB>, scope: Scope, secret: string, fromAddressDomain: string): Promise<DkimKey | undefined> {
  const domain = domainOf(fromAddressDomain);
  if (!domain) return undefined;
  const row = await selectIn(db, 'sending_domains', scope).select(['domain', 'dkim_selector', 'dkim_private_key'])
    .where('domain', '=', domain).where('status', '=', 'verified').executeTakeFirst();
  if (!row) return undefined;
  // The sandbox's example.com keeps the sandbox's own key (sandbox.domains.ts), not a sealed one.
  const privateKey = row.dkim_private_key === SANDBOX_KEY_MARKER ? SANDBOX_DKIM_PRIVATE_KEY : unseal(secret, row.dkim_private_key);
  return { domainName: row.domain, keySelector: row.dkim_selector, privateKey };
}
