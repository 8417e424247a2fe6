// The common-path wrappers (Sendonce) and SendonceError on Node 20 (node --test),
// against dist/ as published, with a fake service that records what it was sent.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";
import { Sendonce, SendonceError } from "../dist/index.js";

/** A fake service: routes maps "METHOD /path" to a handler of (url, body, headers) → [status, json]. */
async function fake(routes) {
  const seen = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const url = new URL(req.url, "http://x");
      seen.push({ method: req.method, path: url.pathname, query: Object.fromEntries(url.searchParams), body, headers: req.headers });
      const handler = routes[`${req.method} ${url.pathname}`];
      const [status, json] = handler ? handler(url, body, req.headers) : [404, { type: "https://sendonce.dev/problems/not_found", title: "Not found", status: 404 }];
      const type = status >= 400 ? "application/problem+json" : "application/json";
      if (json === undefined) { res.writeHead(status); return res.end(); }
      res.writeHead(status, { "Content-Type": type });
      res.end(JSON.stringify(json));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, seen, close: () => server.close() };
}

test("subscribers.create returns the subscriber, with a key made for the POST", async (t) => {
  const srv = await fake({ "POST /v1/subscribers": (_u, body) => [201, { id: 7, ...JSON.parse(body), status: "pending" }] });
  t.after(srv.close);
  const so = new Sendonce({ url: srv.url, apiKey: "so_k" });
  const sub = await so.subscribers.create({ email: "ada@example.com" });
  assert.equal(sub.id, 7);
  assert.equal(sub.email, "ada@example.com");
  assert.match(srv.seen[0].headers["idempotency-key"], /^[0-9a-f-]{36}$/);
  assert.equal(srv.seen[0].headers.authorization, "Bearer so_k");
});

test("an error answer is a SendonceError with its type, status, detail and fields", async (t) => {
  const srv = await fake({
    "POST /v1/subscribers": () => [409, { type: "https://sendonce.dev/problems/conflict", title: "Conflict", status: 409, detail: "subscriber ada@example.com exists", request_id: "r1" }],
    "POST /v1/campaigns": () => [422, {
      type: "https://sendonce.dev/problems/invalid", title: "Validation failed", status: 422, detail: "from_email is not an address",
      errors: [{ pointer: "/from_email", detail: "from_email is not an address" }, { pointer: "/name", detail: "is required" }],
    }],
    
  });
  t.after(srv.close);
  const so = new Sendonce({ url: srv.url, apiKey: "k", maxRetries: 0 });

  const conflict = await so.subscribers.create({ email: "ada@example.com" }).catch((e) => e);
  assert.ok(conflict instanceof SendonceError);
  assert.equal(conflict.status, 409);
  assert.equal(conflict.type, "https://sendonce.dev/problems/conflict");
  assert.equal(conflict.detail, "subscriber ada@example.com exists");
  assert.equal(conflict.requestId, "r1");
  assert.deepEqual(conflict.fields, {});
  assert.equal(conflict.message, "sendonce: 409 subscriber ada@example.com exists");
  assert.equal(conflict.cause, conflict.problem);

  const invalid = await so.campaigns.create({ name: "", from_email: "nope" }).catch((e) => e);
  assert.equal(invalid.status, 422);
  assert.deepEqual(invalid.fields, { "/from_email": "from_email is not an address", "/name": "is required" });
  // The detail once, however many fields repeat it.
  assert.equal(invalid.message, "sendonce: 422 from_email is not an address (/from_email): /name: is required");

  const missing = await so.campaigns.get(42).catch((e) => e);
  assert.equal(missing.status, 404);
  assert.equal(missing.type, "https://sendonce.dev/problems/not_found");
});

test("messages.send carries the caller's Idempotency-Key, and every attempt the same one", async (t) => {
  let calls = 0;
  const srv = await fake({
    "POST /v1/messages": (_u, body) => (++calls === 1 ? [503, { type: "x", title: "Unavailable", status: 503 }] : [202, { id: 3, status: "queued", ...JSON.parse(body) }]),
  });
  t.after(srv.close);
  const so = new Sendonce({ url: srv.url, apiKey: "k", maxWaitMs: 1 });
  const msg = await so.messages.send({ to: "ada@example.com", from: "shop@example.com", subject: "Receipt", text: "Thanks" },
    { idempotencyKey: "order-1002-receipt" });
  assert.equal(msg.id, 3);
  assert.deepEqual(srv.seen.map((s) => s.headers["idempotency-key"]), ["order-1002-receipt", "order-1002-receipt"]);
});

test("campaigns.approve posts to the campaign's approve route", async (t) => {
  const srv = await fake({ "POST /v1/campaigns/5/approve": (_u, body) => [200, { id: 5, status: "approved", body }] });
  t.after(srv.close);
  const so = new Sendonce({ url: srv.url, apiKey: "k" });
  const c = await so.campaigns.approve(5);
  assert.equal(c.status, "approved");
  assert.equal(srv.seen[0].body, "{}");
  assert.ok(srv.seen[0].headers["idempotency-key"]);
});

test("iter walks every page with the query kept, and events.iter pages with after", async (t) => {
  const srv = await fake({
    "GET /v1/subscribers": (u) => (u.searchParams.get("cursor") === "p2"
      ? [200, { data: [{ id: 3 }], next_cursor: null }]
      : [200, { data: [{ id: 1 }, { id: 2 }], next_cursor: "p2" }]),
    "GET /v1/events": (u) => (u.searchParams.get("after") === "e2"
      ? [200, { data: [], next_cursor: null }]
      : [200, { data: [{ id: "evt_1", type: "endpoint.ping" }], next_cursor: "e2" }]),
  });
  t.after(srv.close);
  const so = new Sendonce({ url: srv.url, apiKey: "k" });
  const ids = [];
  for await (const s of so.subscribers.iter({ status: "confirmed", limit: 2 })) ids.push(s.id);
  assert.deepEqual(ids, [1, 2, 3]);
  assert.deepEqual(srv.seen.map((s) => s.query), [{ status: "confirmed", limit: "2" }, { status: "confirmed", limit: "2", cursor: "p2" }]);

  const events = [];
  for await (const ev of so.events.iter({ after: "e1" })) events.push(ev.id);
  assert.deepEqual(events, ["evt_1"]);
  assert.deepEqual(srv.seen.slice(2).map((s) => s.query.after), ["e1", "e2"]);
});

test("a listing's error answer ends iter with a SendonceError", async (t) => {
  const srv = await fake({ "GET /v1/messages": () => [401, { type: "https://sendonce.dev/problems/unauthorized", title: "Unauthorized", status: 401 }] });
  t.after(srv.close);
  const so = new Sendonce({ url: srv.url, apiKey: "bad" });
  await assert.rejects(async () => { for await (const _ of so.messages.iter()) { /* none */ } },
    (err) => err instanceof SendonceError && err.status === 401 && err.type.endsWith("/unauthorized"));
});

test("events.stream follows with the client's URL and key", async (t) => {
  const server = createServer((req, res) => {
    assert.equal(req.headers.authorization, "Bearer so_s");
    assert.equal(req.url, "/v1/events/stream?type=endpoint.ping");
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    res.end(`id: c1\nevent: endpoint.ping\ndata: ${JSON.stringify({ id: "evt_1", type: "endpoint.ping", timestamp: "2030-01-01T00:00:00Z", data: { endpoint_id: 4 } })}\n\n`);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const so = new Sendonce({ url: `http://127.0.0.1:${server.address().port}/`, apiKey: "so_s" });
  for await (const ev of so.events.stream({ types: ["endpoint.ping"] })) {
    assert.equal(ev.cursor, "c1");
    assert.equal(ev.type === "endpoint.ping" && ev.data.endpoint_id, 4);
    break;
  }
});
