// Callback URLs the service gives a provider with each call (a text's status callback): the path
// names what the callback is about (tenant, connection, the call's reference), each part a segment,
// and ends in a signature of them made with the service's secret, so nothing is stored per call and
// no part can be made up or altered; the provider's own signature over each callback
// (signatures.ts) is checked besides.
import { createHmac } from 'node:crypto';
import { safeEqual } from './signatures.ts';

const macOf = (secret: string, parts: readonly string[]) => createHmac('sha256', secret).update(`callback\n${parts.join('\n')}`).digest('base64url').slice(0, 32);

/** The path of `parts` under `prefix`, signed: `prefix/part/…/signature` (each part URL-safe, as ids are). */
export const callbackPath = (secret: string, prefix: string, parts: readonly string[]): string => `${prefix}/${[...parts, macOf(secret, parts)].join('/')}`;

/** Whether `signature` is the service's signature of `parts`. */
export const isCallbackOf = (secret: string, parts: readonly string[], signature: string): boolean => safeEqual(signature, macOf(secret, parts));
