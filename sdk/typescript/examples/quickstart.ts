// The five-minute tour in TypeScript: add a subscriber, send a transactional message,
// read a campaign's counts. Type-checked in CI (npm run check); run it with a
// TypeScript runner after `make run` printed your key.
import { createClient, idempotencyKey, type Schema } from "../src/index.js";

const api = createClient({ url: "http://127.0.0.1:8080", apiKey: "so_your_key" });

export async function tour(): Promise<void> {
  // Only the address is required; the status defaults to pending on the server.
  const created = await api.POST("/v1/subscribers", {
    params: { header: { "Idempotency-Key": idempotencyKey() } },
    body: { email: "ada@example.com", name: "Ada Lovelace" },
  });
  if (created.error) {
    throw new Error(`${created.error.status} ${created.error.title}`);
  }
  const subscriber: Schema<"Subscriber"> = created.data;
  console.log("subscriber", subscriber.id, subscriber.status);

  // The key names the message: a retry with the same key sends nothing more.
  const sent = await api.POST("/v1/messages", {
    params: { header: { "Idempotency-Key": "order-A-1002-receipt" } },
    body: { to: "ada@example.com", from: "shop@example.com", subject: "Your receipt", text: "Thanks!" },
  });
  if (sent.data) {
    console.log("message", sent.data.id, sent.data.status);
  }

  const page = await api.GET("/v1/campaigns", { params: { query: { limit: 10 } } });
  for (const campaign of page.data?.data ?? []) {
    const stats = await api.GET("/v1/campaigns/{id}/stats", { params: { path: { id: campaign.id } } });
    console.log(campaign.name, stats.data?.counts.sent, "sent");
  }
}
