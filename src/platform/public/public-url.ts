// The address people reach the service at (PUBLIC_URL): the base of the absolute links the service
// puts in what it sends (unsubscribe links in messages), where no request is at hand to say its own
// host. One per process, like the clock: the app's builders install it from the configuration.

let base = 'http://localhost:8080';

/** Makes `url` (scheme, host and any path prefix, no trailing slash) the base of public links; `buildApp` and the worker call it. */
export function usePublicUrl(url: string): void {
  base = url.replace(/\/+$/, '');
}

/** The absolute URL of a public path (`/public/unsubscribe/…`). */
export const publicUrlOf = (path: string): string => `${base}${path}`;
