// The one door to the API: same origin, the session cookie, and the session's
// CSRF token on every request that changes something. Nothing is stored in the
// browser beyond the HttpOnly cookie the server set.

let csrf = null;

/** @param {string|null} token */
export function setCSRF(token) { csrf = token; }

/** An RFC 9457 problem answered by the API. */
export class Problem extends Error {
  /** @param {number} status @param {any} body */
  constructor(status, body) {
    super((body && body.detail) || `HTTP ${status}`);
    this.status = status;
    this.body = body || {};
    /** @type {Record<string,string>} pointer → detail */
    this.fields = {};
    /** @type {Record<string,number>} pointer → the line of the field's text it is on (templates) */
    this.lines = {};
    for (const f of this.body.errors || []) {
      this.fields[f.pointer] = f.detail;
      if (f.line) this.lines[f.pointer] = f.line;
    }
  }
}

/**
 * @param {string} method
 * @param {string} path
 * @param {any} [body]
 * @returns {Promise<any>}
 */
export async function api(method, path, body) {
  /** @type {Record<string,string>} */
  const headers = { Accept: 'application/json' };
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  if (method !== 'GET' && csrf) headers['X-CSRF-Token'] = csrf;
  let res = await fetch(path, { method, headers, body: payload, credentials: 'same-origin' });
  // A busy server sheds requests with 503 and Retry-After: a read is asked again
  // (twice at most) after the wait it names.
  for (let retry = 0; res.status === 503 && method === 'GET' && retry < 2; retry++) {
    const wait = Math.min(Number(res.headers.get('Retry-After')) || 1, 5);
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    res = await fetch(path, { method, headers, credentials: 'same-origin' });
  }
  if (res.status === 204) return null;
  const type = res.headers.get('Content-Type') || '';
  const data = type.includes('json') ? await res.json() : await res.text();
  if (!res.ok) throw new Problem(res.status, data);
  return data;
}

/**
 * Uploads a file (a CSV import, an image) with progress (fetch cannot report upload progress).
 * @param {string} path @param {Blob} file @param {(sent:number,total:number)=>void} onProgress
 * @param {string} [contentType]
 */
export function upload(path, file, onProgress, contentType = 'text/csv') {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.setRequestHeader('Content-Type', contentType);
    xhr.setRequestHeader('Accept', 'application/json');
    if (csrf) xhr.setRequestHeader('X-CSRF-Token', csrf);
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      let data = null;
      try { data = JSON.parse(xhr.responseText); } catch { data = { detail: xhr.responseText }; }
      if (xhr.status >= 200 && xhr.status < 300) resolve(data); else reject(new Problem(xhr.status, data));
    };
    xhr.onerror = () => reject(new Problem(0, { detail: 'the upload failed: network error' }));
    xhr.send(file);
  });
}

/** Event types the dashboard listens to on the stream. */
const streamTypes = ['campaign.approved', 'campaign.started', 'campaign.paused', 'campaign.resumed',
  'campaign.cancelled', 'campaign.sent', 'send.sent', 'send.failed', 'send.unknown', 'send.suppressed',
  'subscriber.unsubscribed', 'subscriber.bounced', 'subscriber.complained', 'suppression.created',
  'sequence.step_sent', 'sequence.exited'];

/** @type {Set<(e:any)=>void>} */
const listeners = new Set();
/** @type {EventSource|null} */
let source = null;
let lastId = '';
let retry = null;
/** How many events the stream delivered (the browser test reads it). */
export const streamStats = { events: 0, opened: 0 };

/** Whether a stream is being opened (its token being minted). */
let opening = false;

async function openStream() {
  retry = null;
  // One stream at a time: a second call while the first waits for its token would
  // open a second EventSource that nothing closes, and each holds one of the
  // browser's six connections to the origin until requests queue behind them.
  if (source || opening || listeners.size === 0) return;
  opening = true;
  try {
    // A short-lived token scoped to the stream: EventSource cannot send headers,
    // and the session cookie never goes in a URL.
    const t = await api('POST', '/v1/events/stream-tokens');
    opening = false;
    if (source || listeners.size === 0) return;
    const q = new URLSearchParams({ token: t.token });
    if (lastId) q.set('after', lastId);
    const es = new EventSource('/v1/events/stream?' + q.toString());
    source = es;
    es.onopen = () => {
      streamStats.opened++;
      document.documentElement.dataset.stream = 'open';
      for (const fn of openListeners) fn();
    };
    for (const type of streamTypes) {
      es.addEventListener(type, (/** @type {MessageEvent} */ m) => {
        lastId = m.lastEventId || lastId;
        streamStats.events++;
        document.documentElement.dataset.streamEvents = String(streamStats.events);
        let ev;
        try { ev = JSON.parse(m.data); } catch { return; }
        for (const l of listeners) l(ev);
      });
    }
    es.onerror = () => {
      // The browser reconnects by itself (with Last-Event-ID) unless the server
      // refused: then the token has expired; mint another.
      if (es.readyState === EventSource.CLOSED) {
        source = null;
        document.documentElement.dataset.stream = 'closed';
        if (!retry) retry = setTimeout(openStream, 2000);
      }
    };
  } catch (e) {
    opening = false;
    if (!retry) retry = setTimeout(openStream, 5000);
  }
}

/**
 * Calls fn with every event of the account's stream until the returned function is called.
 * @param {(e:any)=>void} fn
 */
export function subscribe(fn) {
  listeners.add(fn);
  openStream();
  return () => {
    listeners.delete(fn);
    if (listeners.size === 0 && source) { source.close(); source = null; }
  };
}

/** @type {Set<()=>void>} */
const openListeners = new Set();

/**
 * Calls fn each time the stream (re)opens, until the returned function is called:
 * a page that loaded before then reloads once, for the events it may have missed.
 * @param {()=>void} fn
 */
export function onStreamOpen(fn) {
  openListeners.add(fn);
  return () => { openListeners.delete(fn); };
}

/** Closes the stream (on sign-out). */
export function closeStream() {
  listeners.clear();
  if (source) { source.close(); source = null; }
}
