// A tiny client for the sendonce API: openapi-fetch over the types that
// openapi-typescript generates from openapi.yaml (src/schema.d.ts; `npm run generate`).
import createFetchClient, { type Client } from "openapi-fetch";
import { SendonceError } from "./error.js";
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
  response?: Response;
}

/**
 * Every item of a cursor-paginated listing, pages fetched as the loop asks for them:
 *
 *     for await (const s of paginate((cursor) => api.GET("/v1/subscribers", { params: { query: { cursor } } }))) { … }
 *
 * An error answer is thrown as a SendonceError.
 */
export async function* paginate<T>(page: (cursor: string | undefined) => Promise<PageResult<T>>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const result = await page(cursor);
    if (result.error !== undefined || result.data === undefined) {
      const status = result.response?.status ?? (result.error as { status?: number } | undefined)?.status ?? 0;
      throw new SendonceError(status, result.error);
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

