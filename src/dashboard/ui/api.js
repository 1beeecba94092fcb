// Calls to the service's public API with the signed-in key. The key lives in sessionStorage only:
// it is gone when the tab closes, and no other tab or later visit can read it.
const KEY = 'rds.apiKey';

export const session = {
  key: () => sessionStorage.getItem(KEY),
  save: (key) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

/** An error answer of the API: its status and `{detail, ...}` body. */
export class ApiError extends Error {
  constructor(status, body) {
    super(detailText(body?.detail) || `Request failed (${status})`);
    this.status = status;
    this.body = body ?? {};
  }
}

/** `detail` is a message, or for validation errors a list of `{loc, msg}`. */
function detailText(detail) {
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) return detail.map((d) => `${(d.loc ?? []).slice(1).join('.')}: ${d.msg}`).join('; ');
  return '';
}

/** Fired when the key stops working (revoked, expired): the app signs out. */
export const AUTH_LOST = 'rds:auth-lost';

/**
 * A request to the API with a JSON body, or a FormData body sent as multipart (the browser sets its
 * content type and boundary); resolves with the parsed body, rejects with an ApiError.
 */
export async function api(path, { method = 'GET', body, signal } = {}) {
  const headers = { authorization: `Bearer ${session.key()}`, accept: 'application/json' };
  const form = body instanceof FormData;
  if (body !== undefined && !form) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined || form ? body : JSON.stringify(body), signal });
  const parsed = await res.json().catch(() => ({}));
  if (res.status === 401) dispatchEvent(new CustomEvent(AUTH_LOST, { detail: parsed.detail }));
  if (!res.ok) throw new ApiError(res.status, parsed);
  return parsed;
}

/** Query string of the defined, non-empty values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') q.set(name, String(value));
  const text = q.toString();
  return text ? `?${text}` : '';
}

/**
 * Streams the tenant's live events (`GET /v1/events` as Server-Sent Events) until `signal` aborts,
 * calling `onEvent` with each. EventSource cannot send an Authorization header, so the stream is
 * read from fetch's body; after a drop it reconnects with Last-Event-ID and misses nothing.
 */
export async function streamEvents(onEvent, onState, signal) {
  let lastId = '';
  while (!signal.aborted) {
    try {
      const headers = { authorization: `Bearer ${session.key()}`, accept: 'text/event-stream' };
      if (lastId) headers['last-event-id'] = lastId;
      const res = await fetch('/v1/events', { headers, signal });
      if (res.status === 401) dispatchEvent(new CustomEvent(AUTH_LOST));
      if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
      onState('live');
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trimStart()).join('\n');
          const id = frame.split('\n').find((line) => line.startsWith('id:'));
          if (id) lastId = id.slice(3).trim();
          if (data) onEvent(JSON.parse(data));
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      console.warn('event stream interrupted', error);
    }
    if (signal.aborted) return;
    onState('reconnecting');
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}
