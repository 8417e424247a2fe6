// The five-minute tour in TypeScript: add a subscriber (or find that it exists), send a
// transactional message once, and read every campaign's counts. Type-checked in CI
// (npm run check); the newcomer's script (tools/newcomer.sh) compiles it against the
// package as `npm pack` makes it and runs it against `make run`:
//
//     import { Sendonce } from "@sendonce/client";
//     await tour(new Sendonce({ url: "http://127.0.0.1:8080", apiKey: process.env.SENDONCE_API_KEY! }));
import { Sendonce, SendonceError, type Schema } from "../src/index.js";

export async function tour(so: Sendonce): Promise<void> {
  // Only the address is required. An address the account has is a 409, thrown as a
  // SendonceError: find the subscriber instead.
  let subscriber: Schema<"Subscriber">;
  try {
    subscriber = await so.subscribers.create({ email: "ada@example.com", name: "Ada Lovelace", status: "confirmed" });
  } catch (err) {
    if (!(err instanceof SendonceError && err.status === 409)) throw err;
    const page = await so.subscribers.list({ email: "ada@example.com", limit: 1 });
    subscriber = page.data[0]!;
  }
  console.log("subscriber", subscriber.id, subscriber.email, subscriber.status);

  // The key names the message: sending it again (a retry, a second run) returns the
  // same message and sends nothing more.
  const message = await so.messages.send(
    { to: subscriber.email, from: "shop@example.com", subject: "Your receipt", text: "Thanks!" },
    { idempotencyKey: "order-A-1002-receipt" },
  );
  console.log("message", message.id, message.status);

  // Every campaign, pages fetched as the loop goes; stats through the typed client of
  // every other operation (so.api).
  for await (const campaign of so.campaigns.iter({ limit: 10 })) {
    const stats = await so.api.GET("/v1/campaigns/{id}/stats", { params: { path: { id: campaign.id } } });
    console.log("campaign", campaign.id, campaign.name, campaign.status, stats.data?.counts.sent ?? 0, "sent");
  }

  // A bad request names its field.
  try {
    await so.subscribers.create({ email: "not an address" });
  } catch (err) {
    if (!(err instanceof SendonceError)) throw err;
    console.log("refused", err.status, Object.keys(err.fields).join(","));
  }
}
