// Webhook verification with Web Crypto only (no Node-only API), so it runs in Node 20+,
// Deno, Bun, workers and browsers alike.
import type { Event } from "./client.js";

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

