// Runtime tests of the package's own code on Node 20 (node --test), against dist/
// as published: retries with one Idempotency-Key, paginate, verifyWebhook.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import { test } from "node:test";
import { createClient, paginate, stream, verifyWebhook, SignatureError } from "../dist/index.js";

async function serve(handler) {
  const server = createServer(handler);
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

test("a POST gets a key, and a 503 then a 429 are retried with the same key and body", async () => {
  const seen = [];
  const srv = await serve((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      seen.push({ key: req.headers["idempotency-key"], body, auth: req.headers.authorization });
      if (seen.length === 1) { res.writeHead(503, { "Retry-After": "0" }); return res.end(); }
      if (seen.length === 2) { res.writeHead(429, { "Retry-After": "0", "Content-Type": "application/problem+json" }); return res.end("{}"); }
      res.writeHead(201, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ id: 7, email: "ada@example.com" }));
    });
  });
  try {
    const api = createClient({ url: srv.url, apiKey: "so_k" });
    // No Idempotency-Key named (as a JavaScript caller may): one is made.
    const { data, response } = await api.POST("/v1/subscribers", { body: { email: "ada@example.com" } });
    assert.equal(response.status, 201);
    assert.equal(data.id, 7);
    assert.equal(seen.length, 3);
    assert.match(seen[0].key, /^[0-9a-f-]{36}$/);
    assert.deepEqual(new Set(seen.map((s) => s.key)).size, 1, "one key on every attempt");
    assert.deepEqual(seen.map((s) => s.body), Array(3).fill('{"email":"ada@example.com"}'));
    assert.equal(seen[0].auth, "Bearer so_k");
  } finally {
    srv.close();
  }
});

test("a 4xx is not retried, and the retries stop at maxRetries", async () => {
  let calls = 0;
  const srv = await serve((req, res) => {
    calls++;
    res.writeHead(calls === 1 ? 409 : 500, { "Content-Type": "application/problem+json" });
    res.end('{"status":409,"title":"Conflict","type":"x"}');
  });
  try {
    const api = createClient({ url: srv.url, apiKey: "k", maxRetries: 2, maxWaitMs: 1 });
    const first = await api.GET("/v1/campaigns/{id}", { params: { path: { id: 1 } } });
    assert.equal(first.response.status, 409);
    assert.equal(calls, 1);
    const second = await api.GET("/v1/campaigns/{id}", { params: { path: { id: 1 } } });
    assert.equal(second.response.status, 500);
    assert.equal(calls, 4, "one attempt and two retries");
  } finally {
    srv.close();
  }
});

test("paginate walks every page and throws an error answer", async () => {
  const pages = { "": { data: [1, 2], next_cursor: "b" }, b: { data: [3], next_cursor: "c" }, c: { data: [], next_cursor: null } };
  const got = [];
  for await (const n of paginate(async (cursor) => ({ data: pages[cursor ?? ""] }))) got.push(n);
  assert.deepEqual(got, [1, 2, 3]);
  await assert.rejects(async () => { for await (const _ of paginate(async () => ({ error: { status: 401 } }))) { /* none */ } },
    (err) => err.cause.status === 401);
});

test("verifyWebhook returns the typed events of a signed delivery and refuses others", async () => {
  const key = Buffer.from("a-secret-of-some-length-32-bytes");
  const secret = "whsec_" + key.toString("base64");
  const now = new Date();
  const ts = String(Math.floor(now.getTime() / 1000));
  const sign = (id, body) => "v1," + createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest("base64");
  const body = JSON.stringify({ id: "evt_1", type: "endpoint.ping", timestamp: now.toISOString(), data: { endpoint_id: 3 } });
  const headers = { "webhook-id": "evt_1", "webhook-timestamp": ts, "webhook-signature": "v1,AAAA " + sign("evt_1", body) };
  const events = await verifyWebhook(headers, body, ["whsec_b3RoZXI=", secret], now);
  assert.equal(events.length, 1);
  assert.equal(events[0].type, "endpoint.ping");
  assert.equal(events[0].data.endpoint_id, 3);

  const batch = JSON.stringify({ type: "event.batch", timestamp: now.toISOString(), data: [JSON.parse(body), JSON.parse(body)] });
  const batchHeaders = { "webhook-id": "batch_9", "webhook-timestamp": ts, "webhook-signature": sign("batch_9", batch) };
  assert.equal((await verifyWebhook(batchHeaders, batch, secret, now)).length, 2);

  await assert.rejects(verifyWebhook(headers, body + " ", secret, now), SignatureError);
  await assert.rejects(verifyWebhook(headers, body, "whsec_b3RoZXI=", now), SignatureError);
  await assert.rejects(verifyWebhook(headers, body, secret, new Date(now.getTime() + 6 * 60_000)), SignatureError);
});

test("stream yields typed events and resumes after a cut with Last-Event-ID", async () => {
  const lastIDs = [];
  let conn = 0;
  const ev = (n) => `id: c${n}\nevent: send.sent\ndata: ${JSON.stringify({ id: `evt_${n}`, type: "send.sent", timestamp: "2030-01-01T00:00:00Z", data: { campaign_id: 1, send_id: n, email: "a@example.com", status: "sent" } })}\n\n`;
  const srv = await serve((req, res) => {
    conn++;
    lastIDs.push(req.headers["last-event-id"] ?? null);
    assert.equal(req.headers.authorization, "Bearer k");
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    if (conn === 1) { res.end(": heartbeat\n\n" + ev(1) + ev(2)); return; } // the connection ends: a reconnect resumes
    res.end(ev(3));
  });
  try {
    const got = [];
    for await (const e of stream({ url: srv.url, apiKey: "k", types: ["send.sent"] })) {
      got.push([e.cursor, e.type, e.data.send_id]);
      if (got.length === 3) break;
    }
    assert.deepEqual(got, [["c1", "send.sent", 1], ["c2", "send.sent", 2], ["c3", "send.sent", 3]]);
    assert.deepEqual(lastIDs, [null, "c2"]);
  } finally {
    srv.close();
  }
});

test("stream throws a refusal at once", async () => {
  const srv = await serve((req, res) => {
    res.writeHead(401, { "Content-Type": "application/problem+json" });
    res.end('{"status":401,"title":"Unauthorized"}');
  });
  try {
    await assert.rejects(async () => { for await (const _ of stream({ url: srv.url, apiKey: "bad" })) { /* none */ } },
      (err) => err.cause.status === 401);
  } finally {
    srv.close();
  }
});
