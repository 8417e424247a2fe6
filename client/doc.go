// Package client is the Go SDK for the sendonce API.
//
// The types and one method per operation are generated from openapi.yaml
// (client.gen.go, by oapi-codegen; `make generate` rewrites it). Client embeds
// the generated ClientWithResponses and adds what a caller would otherwise write
// around it:
//
//   - authentication with the API key on every request;
//   - retries of network errors, 429 and 5xx, honouring Retry-After, with the same
//     Idempotency-Key on every attempt (one is made for a POST that has none), so a
//     retried POST never does its work twice;
//   - Check, which turns a response that is not 2xx into an *Error carrying the
//     RFC 9457 problem;
//   - iterators over cursor-paginated listings (Subscribers, Campaigns, …);
//   - Stream, the account's events as an iterator that reconnects with Last-Event-ID;
//   - Verify, the Standard Webhooks signature check for the events sendonce posts
//     to your endpoints.
package client
