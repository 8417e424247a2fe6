// A tiny client for the sendonce API: openapi-fetch over the types that
// openapi-typescript generates from openapi.yaml (src/schema.d.ts; `npm run generate`).
import createFetchClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths, operations } from "./schema.js";

/** The schemas of openapi.yaml by name: `Schema<"Subscriber">`. */
export type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];
/** An RFC 9457 problem, the body of every error answer. */
export type Problem = Schema<"Problem">;

export interface SendonceOptions {
  /** The service's base URL, e.g. http://127.0.0.1:8080. */
  url: string;
  /** The account's API key, sent as `Authorization: Bearer`. */
  apiKey: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

/** A client whose GET/POST/PATCH/DELETE take the paths, parameters and bodies of openapi.yaml, typed. */
export type SendonceClient = Client<paths>;

export function createClient(options: SendonceOptions): SendonceClient {
  return createFetchClient<paths>({
    baseUrl: options.url.replace(/\/+$/, ""),
    headers: { Authorization: `Bearer ${options.apiKey}` },
    fetch: options.fetch,
  });
}

/**
 * A new Idempotency-Key for one distinct request: send it again with a retry of that
 * request and the server does the work once.
 */
export function idempotencyKey(): string {
  return crypto.randomUUID();
}
