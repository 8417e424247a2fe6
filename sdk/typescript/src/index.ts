// A tiny client for the sendonce API: openapi-fetch over the types that
// openapi-typescript generates from openapi.yaml (src/schema.d.ts; `npm run generate`).
import createFetchClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths, operations } from "./schema.js";

/** The schemas of openapi.yaml by name: `Schema<"Subscriber">`. */
export type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];
/** An RFC 9457 problem, the body of every error answer. */
export type Problem = Schema<"Problem">;

/** An event of any type; narrow it on `type` for its typed `data`. */
export type Event = Schema<"Event">;
/** The event types of the catalogue (docs/events.md). */
export type EventType = Schema<"EventType">;

export interface SendonceOptions {
  /** The service's base URL, e.g. http://127.0.0.1:8080. */
  url: string;
  /** The account's API key, sent as `Authorization: Bearer`. */
  apiKey: string;
  /** A fetch to use instead of the global one. */
  fetch?: (input: Request) => Promise<Response>;
  /** How many times a failed attempt is repeated (network error, 429, 5xx); default 3, 0 for none. */
  maxRetries?: number;
  /** The longest wait between attempts in milliseconds, whatever Retry-After asks; default 30 000. */
  maxWaitMs?: number;
}

/** A client whose GET/POST/PATCH/DELETE take the paths, parameters and bodies of openapi.yaml, typed. */
export type SendonceClient = Client<paths>;

/**
 * A client for the API. Every POST carries an Idempotency-Key (one is made when the
 * call names none), and a failed attempt — a network error, 429 or 5xx — is sent
 * again with the same key and body after the wait the server asked for
 * (Retry-After) or an exponential one, so a retried POST does its work once.
 */
export function createClient(options: SendonceOptions): SendonceClient {
  return createFetchClient<paths>({
    baseUrl: options.url.replace(/\/+$/, ""),
    headers: { Authorization: `Bearer ${options.apiKey}` },
    fetch: retrying(options.fetch ?? ((r) => globalThis.fetch(r)), options.maxRetries ?? 3, options.maxWaitMs ?? 30_000),
  });
}

/** retrying wraps fetch with the POST key and the retries described at createClient. */
function retrying(next: (input: Request) => Promise<Response>, maxRetries: number, maxWaitMs: number) {
  return async (input: Request): Promise<Response> => {
    let request = input;
    if (request.method === "POST" && !request.headers.has("Idempotency-Key")) {
      request = new Request(request, { headers: new Headers(request.headers) });
      request.headers.set("Idempotency-Key", idempotencyKey());
    }
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= maxRetries;
      const sent = last ? request : request.clone(); // a body is read once: keep a copy for the next attempt
      let response: Response | undefined;
      try {
        response = await next(sent);
      } catch (err) {
        if (last || request.signal?.aborted) throw err;
      }
      if (response && (last || !(response.status === 429 || (response.status >= 500 && response.status !== 501)))) {
        return response;
      }
      let waitMs = Math.min(200 * 2 ** attempt, maxWaitMs, 200 * 2 ** 10);
      waitMs = waitMs / 2 + Math.random() * (waitMs / 2);
      const asked = response ? retryAfterMs(response.headers.get("Retry-After")) : undefined;
      if (asked !== undefined) waitMs = Math.min(asked, maxWaitMs);
      await response?.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  };
}

/** retryAfterMs reads Retry-After (seconds or an HTTP date) as a wait; undefined when it is neither. */
function retryAfterMs(value: string | null): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Math.min(Number(value.trim()), 86_400) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(at - Date.now(), 0), 86_400_000);
}

/** One page of a listing as openapi-fetch answers it. */
export interface PageResult<T> {
  data?: { data: T[]; next_cursor?: string | null };
  error?: unknown;
}

/**
 * Every item of a cursor-paginated listing, pages fetched as the loop asks for them:
 *
 *     for await (const s of paginate((cursor) => api.GET("/v1/subscribers", { params: { query: { cursor } } }))) { … }
 *
 * An error answer is thrown (the problem as the error's cause).
 */
export async function* paginate<T>(page: (cursor: string | undefined) => Promise<PageResult<T>>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const result = await page(cursor);
    if (result.error !== undefined || result.data === undefined) {
      throw new Error("sendonce: listing failed", { cause: result.error });
    }
    yield* result.data.data;
    cursor = result.data.next_cursor ?? undefined;
  } while (cursor);
}

/**
 * A new Idempotency-Key for one distinct request: send it again with a retry of that
 * request and the server does the work once.
 */
export function idempotencyKey(): string {
  return crypto.randomUUID();
}

/** The error of verifyWebhook for a delivery that is not signed by any of the secrets, or too old. */
export class SignatureError extends Error {
  constructor() {
    super("sendonce: webhook signature does not verify");
    this.name = "SignatureError";
  }
}

/** How far a delivery's webhook-timestamp may be from now (Standard Webhooks: five minutes). */
export const toleranceSeconds = 5 * 60;

/**
 * Checks a delivery to one of your event endpoints (Standard Webhooks: an HMAC-SHA256
 * of "id.timestamp.body" under the endpoint's whsec_ secret) with Web Crypto, in
 * Node 20+, Deno, Bun, workers and browsers alike, and returns its events: one, or a
 * batch delivery's. Pass the raw body as received and every secret of a rotation.
 * Narrow each event on `type` for its typed `data`; deduplicate on `id`.
 */
export async function verifyWebhook(headers: Headers | Record<string, string>, body: string,
  secrets: string | string[], now: Date = new Date()): Promise<Event[]> {
  const h = headers instanceof Headers ? headers : new Headers(headers);
  const id = h.get("webhook-id"), ts = h.get("webhook-timestamp"), sigs = h.get("webhook-signature");
  if (!id || !ts || !sigs || !/^\d+$/.test(ts)) throw new SignatureError();
  if (Math.abs(now.getTime() / 1000 - Number(ts)) > toleranceSeconds) throw new SignatureError();
  const content = new TextEncoder().encode(`${id}.${ts}.${body}`);
  const offered = sigs.split(" ").filter((s) => s.startsWith("v1,")).map((s) => s.slice(3));
  for (const secret of Array.isArray(secrets) ? secrets : [secrets]) {
    let raw: Uint8Array<ArrayBuffer>;
    try {
      raw = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
    } catch {
      continue;
    }
    if (raw.length === 0) continue;
    const key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
    for (const sig of offered) {
      let mac: Uint8Array<ArrayBuffer>;
      try {
        mac = Uint8Array.from(atob(sig), (c) => c.charCodeAt(0));
      } catch {
        continue;
      }
      if (await crypto.subtle.verify("HMAC", key, mac, content)) { // constant-time comparison
        const parsed = JSON.parse(body) as { type: string; data: unknown };
        return parsed.type === "event.batch" ? (parsed.data as Event[]) : [parsed as Event];
      }
    }
  }
  throw new SignatureError();
}

/** One event of the stream with its position: pass `cursor` as `after` to resume. */
export type StreamedEvent = Event & { cursor: string };

export interface StreamOptions {
  url: string;
  apiKey: string;
  /** Only events of these types. */
  types?: EventType[];
  /** Start after this cursor (a StreamedEvent's, or a listing's next_cursor); absent means from now on. */
  after?: string;
  /** Ends the stream. */
  signal?: AbortSignal;
  /** How many reconnects in a row before the error is thrown; default 10. */
  reconnects?: number;
  fetch?: (input: Request) => Promise<Response>;
}

/**
 * The account's events as they happen (GET /v1/events/stream), as an async iterator:
 * `for await (const ev of stream({url, apiKey}))`. When the connection breaks it
 * reconnects with Last-Event-ID, so no event is missed or repeated; a refusal (401,
 * 422) is thrown at once. Uses fetch, so it sends the API key as a header and runs in
 * Node 20+ and browsers alike.
 */
export async function* stream(options: StreamOptions): AsyncGenerator<StreamedEvent, void, undefined> {
  const doFetch = options.fetch ?? ((r: Request) => globalThis.fetch(r));
  let last = options.after;
  let failures = 0;
  const query = options.types?.length ? `?type=${options.types.map(encodeURIComponent).join(",")}` : "";
  for (;;) {
    const headers = new Headers({ Authorization: `Bearer ${options.apiKey}`, Accept: "text/event-stream" });
    if (last) headers.set("Last-Event-ID", last);
    let error: unknown;
    try {
      const response = await doFetch(new Request(`${options.url.replace(/\/+$/, "")}/v1/events/stream${query}`,
        { headers, signal: options.signal }));
      if (!response.ok || !response.body) {
        const problem = await response.json().catch(() => undefined);
        const err = new Error(`sendonce: event stream answered ${response.status}`, { cause: problem });
        if (response.status < 500 && response.status !== 429) throw Object.assign(err, { fatal: true });
        throw err;
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "", id = "", data = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl).replace(/\r$/, "");
          buffer = buffer.slice(nl + 1);
          if (line === "") {
            if (data) {
              const ev = { ...(JSON.parse(data) as Event), cursor: id } as StreamedEvent;
              data = "";
              last = id;
              failures = 0;
              yield ev;
            }
          } else if (line.startsWith("id:")) {
            id = line.slice(3).trim();
          } else if (line.startsWith("data:")) {
            data += line.slice(5).replace(/^ /, "");
          }
        }
      }
    } catch (err) {
      if (options.signal?.aborted) return;
      if ((err as { fatal?: boolean }).fatal) throw err;
      error = err;
    }
    if (options.signal?.aborted) return;
    if (++failures > (options.reconnects ?? 10)) throw error ?? new Error("sendonce: the event stream ended");
    await new Promise((resolve) => setTimeout(resolve, Math.min(200 * 2 ** (failures - 1), 5000)));
  }
}
