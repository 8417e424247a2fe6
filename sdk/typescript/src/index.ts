// @sendonce/client: the sendonce API in TypeScript, for Node 20+, Deno, Bun, workers and
// browsers (fetch and Web Crypto only, no Node-only API).
//
// - Sendonce (resources.ts): the common path, so.messages.send(…), so.subscribers.iter(…), …
// - createClient (client.ts): every operation of openapi.yaml, typed (openapi-fetch over
//   the types openapi-typescript generates into schema.d.ts), with retries and keys
// - SendonceError (error.ts), paginate, stream (stream.ts), verifyWebhook (webhook.ts)
export {
  createClient, idempotencyKey, paginate,
  type Event, type EventType, type PageResult, type Problem, type Schema, type SendonceClient, type SendonceOptions,
  type components, type operations, type paths,
} from "./client.js";
export { SendonceError } from "./error.js";
export { Sendonce, Subscribers, Campaigns, Messages, Events, type CallOptions } from "./resources.js";
export { stream, type StreamedEvent, type StreamOptions } from "./stream.js";
export { verifyWebhook, SignatureError, toleranceSeconds } from "./webhook.js";
