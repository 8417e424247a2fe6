// The common path in the shape of resend-node and stripe-node: one call per action,
// returning the resource or throwing a SendonceError, with no status codes to know.
// Every other operation stays on `so.api` (the typed openapi-fetch client).
import { createClient, idempotencyKey, paginate, type Schema, type SendonceClient, type SendonceOptions } from "./client.js";
import { SendonceError } from "./error.js";
import type { operations } from "./schema.js";
import { stream, type StreamedEvent, type StreamOptions } from "./stream.js";

/** The query parameters of an operation of openapi.yaml. */
type Query<Op extends keyof operations> = NonNullable<operations[Op]["parameters"]["query"]>;

/** Options of one call. */
export interface CallOptions {
  /**
   * The Idempotency-Key of a POST: the same key with the same body does the work once,
   * however often it is sent (for a message, for as long as the message exists). One is
   * made when none is given; it covers this call's own retries.
   */
  idempotencyKey?: string;
  /** Aborts the call. */
  signal?: AbortSignal;
}

/** What openapi-fetch answers, loosely: the resource, or the error body, and the response. */
interface Answer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/** The resource a call answered, or a SendonceError for a status that is not 2xx. */
async function unwrap<T>(call: Promise<Answer>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new SendonceError(response.status, error);
  if (data === undefined) throw new Error(`sendonce: ${response.status} answer without a JSON body`);
  return data as T;
}

/** The Idempotency-Key header of a POST: the caller's, or a new one. */
function keyHeader(opts?: CallOptions) {
  return { "Idempotency-Key": opts?.idempotencyKey ?? idempotencyKey() };
}

/** so.subscribers */
export class Subscribers {
  constructor(private readonly api: SendonceClient) {}

  /** Adds a subscriber; an address the account already has is a SendonceError with status 409. */
  create(body: Schema<"SubscriberCreate">, opts?: CallOptions): Promise<Schema<"Subscriber">> {
    return unwrap(this.api.POST("/v1/subscribers", { params: { header: keyHeader(opts) }, body, signal: opts?.signal }));
  }

  /** Subscriber id (404 when the account has none). */
  get(id: number, opts?: CallOptions): Promise<Schema<"Subscriber">> {
    return unwrap(this.api.GET("/v1/subscribers/{id}", { params: { path: { id } }, signal: opts?.signal }));
  }

  /** One page; pass its next_cursor as `cursor` for the next, or use iter. */
  list(query: Query<"listSubscribers"> = {}, opts?: CallOptions): Promise<Schema<"SubscriberPage">> {
    return unwrap(this.api.GET("/v1/subscribers", { params: { query }, signal: opts?.signal }));
  }

  /** Every subscriber that query selects, pages fetched as the loop asks: `for await (const s of so.subscribers.iter())`. */
  iter(query: Omit<Query<"listSubscribers">, "cursor"> = {}, opts?: CallOptions): AsyncGenerator<Schema<"Subscriber">, void, undefined> {
    return paginate((cursor) => this.api.GET("/v1/subscribers", { params: { query: { ...query, cursor } }, signal: opts?.signal }));
  }
}

/** so.campaigns */
export class Campaigns {
  constructor(private readonly api: SendonceClient) {}

  /** Adds a draft campaign. */
  create(body: Schema<"CampaignCreate">, opts?: CallOptions): Promise<Schema<"Campaign">> {
    return unwrap(this.api.POST("/v1/campaigns", { params: { header: keyHeader(opts) }, body, signal: opts?.signal }));
  }

  /** Campaign id. */
  get(id: number, opts?: CallOptions): Promise<Schema<"Campaign">> {
    return unwrap(this.api.GET("/v1/campaigns/{id}", { params: { path: { id } }, signal: opts?.signal }));
  }

  /**
   * Approves draft campaign id for sending, now or at `body.scheduled_for`. A campaign
   * that is not a draft is a SendonceError with status 409.
   */
  approve(id: number, body: Schema<"ApproveRequest"> = {}, opts?: CallOptions): Promise<Schema<"Campaign">> {
    return unwrap(this.api.POST("/v1/campaigns/{id}/approve",
      { params: { path: { id }, header: keyHeader(opts) }, body, signal: opts?.signal }));
  }

  /** One page of campaigns. */
  list(query: Query<"listCampaigns"> = {}, opts?: CallOptions): Promise<Schema<"CampaignPage">> {
    return unwrap(this.api.GET("/v1/campaigns", { params: { query }, signal: opts?.signal }));
  }

  /** Every campaign that query selects. */
  iter(query: Omit<Query<"listCampaigns">, "cursor"> = {}, opts?: CallOptions): AsyncGenerator<Schema<"Campaign">, void, undefined> {
    return paginate((cursor) => this.api.GET("/v1/campaigns", { params: { query: { ...query, cursor } }, signal: opts?.signal }));
  }
}

/** so.messages */
export class Messages {
  constructor(private readonly api: SendonceClient) {}

  /**
   * Accepts a transactional message and returns it, queued. Its Idempotency-Key names it
   * for as long as it exists: pass `{ idempotencyKey: "order-1002-receipt" }` so that
   * sending it again (after a crash of yours) returns the same message instead of
   * sending another; without one, a random key covers this call's own retries only.
   */
  send(body: Schema<"MessageCreate">, opts?: CallOptions): Promise<Schema<"Message">> {
    return unwrap(this.api.POST("/v1/messages", { params: { header: keyHeader(opts) }, body, signal: opts?.signal }));
  }

  /** Message id, with its status. */
  get(id: number, opts?: CallOptions): Promise<Schema<"Message">> {
    return unwrap(this.api.GET("/v1/messages/{id}", { params: { path: { id } }, signal: opts?.signal }));
  }

  /** One page of messages. */
  list(query: Query<"listMessages"> = {}, opts?: CallOptions): Promise<Schema<"MessagePage">> {
    return unwrap(this.api.GET("/v1/messages", { params: { query }, signal: opts?.signal }));
  }

  /** Every message that query selects. */
  iter(query: Omit<Query<"listMessages">, "cursor"> = {}, opts?: CallOptions): AsyncGenerator<Schema<"Message">, void, undefined> {
    return paginate((cursor) => this.api.GET("/v1/messages", { params: { query: { ...query, cursor } }, signal: opts?.signal }));
  }
}

/** so.events */
export class Events {
  constructor(private readonly api: SendonceClient, private readonly options: SendonceOptions) {}

  /** One page of the stored events, oldest first after `after`; an empty page means nothing newer yet. */
  list(query: Query<"listEvents"> = {}, opts?: CallOptions): Promise<Schema<"EventPage">> {
    return unwrap(this.api.GET("/v1/events", { params: { query }, signal: opts?.signal }));
  }

  /**
   * The stored events from `after` up to the newest readable one, then the loop ends
   * (keep the last event's position with list's next_cursor, or follow live with stream).
   */
  iter(query: Omit<Query<"listEvents">, "after" | "order"> & { after?: string } = {}, opts?: CallOptions): AsyncGenerator<Schema<"Event">, void, undefined> {
    const first = query.after;
    return paginate((after) => this.api.GET("/v1/events",
      { params: { query: { ...query, after: after ?? first } }, signal: opts?.signal }));
  }

  /** The account's events as they happen, resuming after a broken connection: see `stream`. */
  stream(opts: Omit<StreamOptions, "url" | "apiKey" | "fetch"> = {}): AsyncGenerator<StreamedEvent, void, undefined> {
    return stream({ ...opts, url: this.options.url, apiKey: this.options.apiKey, fetch: this.options.fetch });
  }
}

/**
 * The client of the common path:
 *
 *     const so = new Sendonce({ url: "http://127.0.0.1:8080", apiKey });
 *     const sub = await so.subscribers.create({ email: "ada@example.com" });
 *     await so.messages.send({ from, to, subject, text }, { idempotencyKey: "order-1002-receipt" });
 *     for await (const c of so.campaigns.iter({ status: "sent" })) { … }
 *
 * Each call returns the resource or throws a SendonceError. Retries, the automatic
 * Idempotency-Key and the rest are createClient's; `so.api` is that typed client, for
 * every other operation of openapi.yaml.
 */
export class Sendonce {
  /** The typed client of every operation: `so.api.GET("/v1/segments")`. */
  readonly api: SendonceClient;
  readonly subscribers: Subscribers;
  readonly campaigns: Campaigns;
  readonly messages: Messages;
  readonly events: Events;

  constructor(options: SendonceOptions) {
    this.api = createClient(options);
    this.subscribers = new Subscribers(this.api);
    this.campaigns = new Campaigns(this.api);
    this.messages = new Messages(this.api);
    this.events = new Events(this.api, options);
  }
}
