// The one error type of an answer that is not 2xx, as the Go SDK's *client.Error.
import type { Problem } from "./client.js";

/**
 * An answer that is not 2xx: its status and the RFC 9457 problem the service
 * answered with. `type` is the problem's type URI (…/problems/invalid,
 * …/problems/not_found, …), `detail` what went wrong, `fields` the fields a 422
 * names (JSON pointer → what is wrong with it); `problem` keeps the whole body
 * (also the error's `cause`).
 *
 *     try { await so.subscribers.create({ email }) }
 *     catch (err) { if (err instanceof SendonceError && err.status === 409) { … } }
 */
export class SendonceError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The problem's type URI; "about:blank" when the answer carried no problem. */
  readonly type: string;
  readonly title: string;
  readonly detail: string | undefined;
  /** JSON pointer of each field a 422 names → what is wrong with it (empty otherwise). */
  readonly fields: Record<string, string>;
  /** The request id to quote when reporting a 500. */
  readonly requestId: string | undefined;
  /** The whole problem body, when the answer had one. */
  readonly problem: Problem | undefined;

  constructor(status: number, body?: unknown) {
    const problem = isProblem(body) ? body : undefined;
    const detail = problem?.detail || undefined;
    const fields: Record<string, string> = {};
    for (const f of problem?.errors ?? []) fields[f.pointer] = f.detail;
    super(message(status, detail || problem?.title || "", problem), { cause: problem ?? body });
    this.name = "SendonceError";
    this.status = status;
    this.type = problem?.type ?? "about:blank";
    this.title = problem?.title ?? "";
    this.detail = detail;
    this.fields = fields;
    this.requestId = problem?.request_id;
    this.problem = problem;
  }
}

function isProblem(body: unknown): body is Problem {
  return typeof body === "object" && body !== null && typeof (body as Problem).status === "number";
}

/** The status and the detail once; a field error that only repeats the detail adds its field, another its text. */
function message(status: number, text: string, problem: Problem | undefined): string {
  let msg = text || `HTTP ${status}`;
  const same: string[] = [], other: string[] = [];
  for (const f of problem?.errors ?? []) {
    if (f.detail === text) same.push(f.pointer);
    else other.push(`${f.pointer}: ${f.detail}`);
  }
  if (same.length) msg += ` (${same.join(", ")})`;
  if (other.length) msg += `: ${other.join("; ")}`;
  return `sendonce: ${status} ${msg}`;
}
