// Typed events in TypeScript: page through the stored events with for await, narrow
// each on its type, and verify a webhook delivery. Type-checked in CI (npm run check).
import { createClient, paginate, stream, verifyWebhook, type Event } from "../src/index.js";

const api = createClient({ url: "http://127.0.0.1:8080", apiKey: "so_your_key" });

/** What a receiver does with one event: `data` is typed once `type` is known. */
export function describe(ev: Event): string {
  switch (ev.type) {
    case "send.sent":
    case "send.failed":
      // A campaign's send names its subscriber, a transactional message's the message.
      return `${ev.data.email}: ${ev.data.status} (${ev.data.message_id ?? ev.data.subscriber_id})`;
    case "subscriber.unsubscribed":
      return `${ev.data.email} left (${ev.data.source})`;
    case "campaign.failed":
      return `campaign ${ev.data.campaign_id} failed: ${ev.data.reason}`;
    case "endpoint.ping":
      return `ping of endpoint ${ev.data.endpoint_id}`;
    default:
      return ev.type;
  }
}

export async function catchUp(): Promise<void> {
  // Every page of the listing, with no cursor loop of your own (the stored events
  // page with after=, the same cursor).
  for await (const ev of paginate((after) => api.GET("/v1/events", { params: { query: { after, type: ["send.failed"] } } }))) {
    console.log(describe(ev));
  }
  for await (const s of paginate((cursor) => api.GET("/v1/subscribers", { params: { query: { cursor, limit: 100 } } }))) {
    console.log(s.email, s.status);
  }
}

/** A fetch-style webhook handler (Node 20+, Deno, workers). */
export async function handle(request: Request): Promise<Response> {
  try {
    const events = await verifyWebhook(request.headers, await request.text(), "whsec_your_endpoint_secret");
    events.forEach((ev) => console.log(describe(ev)));
    return new Response(null, { status: 204 });
  } catch {
    return new Response("bad signature", { status: 401 });
  }
}

/** Follow failures live, resuming after the last one seen. */
export async function follow(after?: string): Promise<string | undefined> {
  for await (const ev of stream({ url: "http://127.0.0.1:8080", apiKey: "so_your_key", types: ["send.failed"], after })) {
    console.log(describe(ev));
    after = ev.cursor;
  }
  return after;
}
