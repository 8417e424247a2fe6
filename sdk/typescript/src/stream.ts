// The event stream (Server-Sent Events over fetch) as an async iterator, with resume.
import type { Event, EventType } from "./client.js";
import { SendonceError } from "./error.js";

/** One event of the stream with its position: pass `cursor` as `after` to resume. */
export type StreamedEvent = Event & { cursor: string };

export interface StreamOptions {
  url: string;
  apiKey: string;
  /** Only events of these types. */
  types?: EventType[];
  /** Start after this cursor (a StreamedEvent's, or a listing's next_cursor); absent means from now on. */
  after?: string;
  /** Ends the stream. */
  signal?: AbortSignal;
  /** How many reconnects in a row before the error is thrown; default 10. */
  reconnects?: number;
  fetch?: (input: Request) => Promise<Response>;
}

/**
 * The account's events as they happen (GET /v1/events/stream), as an async iterator:
 * `for await (const ev of stream({url, apiKey}))`. When the connection breaks it
 * reconnects with Last-Event-ID, so no event is missed or repeated; a refusal (401,
 * 422) is thrown at once, as a SendonceError. Uses fetch, so it sends the API key as a header and runs in
 * Node 20+ and browsers alike.
 */
export async function* stream(options: StreamOptions): AsyncGenerator<StreamedEvent, void, undefined> {
  const doFetch = options.fetch ?? ((r: Request) => globalThis.fetch(r));
  let last = options.after;
  let failures = 0;
  const query = options.types?.length ? `?type=${options.types.map(encodeURIComponent).join(",")}` : "";
  for (;;) {
    const headers = new Headers({ Authorization: `Bearer ${options.apiKey}`, Accept: "text/event-stream" });
    if (last) headers.set("Last-Event-ID", last);
    let error: unknown;
    try {
      const response = await doFetch(new Request(`${options.url.replace(/\/+$/, "")}/v1/events/stream${query}`,
        { headers, signal: options.signal }));
      if (!response.ok || !response.body) {
        const problem = await response.json().catch(() => undefined);
        throw new SendonceError(response.status, problem);
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "", id = "", data = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl).replace(/\r$/, "");
          buffer = buffer.slice(nl + 1);
          if (line === "") {
            if (data) {
              const ev = { ...(JSON.parse(data) as Event), cursor: id } as StreamedEvent;
              data = "";
              last = id;
              failures = 0;
              yield ev;
            }
          } else if (line.startsWith("id:")) {
            id = line.slice(3).trim();
          } else if (line.startsWith("data:")) {
            data += line.slice(5).replace(/^ /, "");
          }
        }
      }
    } catch (err) {
      if (options.signal?.aborted) return;
      if (err instanceof SendonceError && err.status < 500 && err.status !== 429) throw err; // a refusal
      error = err;
    }
    if (options.signal?.aborted) return;
    if (++failures > (options.reconnects ?? 10)) throw error ?? new Error("sendonce: the event stream ended");
    await new Promise((resolve) => setTimeout(resolve, Math.min(200 * 2 ** (failures - 1), 5000)));
  }
}
