// Export links for the list pages: the page's current filters, as CSV or NDJSON,
// downloaded from the API's streamed export routes (docs/reports.md) with the
// session cookie, as the campaign report's recipients export is. Reads only
// (data-reads): a read-only session keeps them.
import { html } from './preact-htm.js';
import { can } from './perm.js';

/**
 * @param {{path:string, params?:Record<string,string>, name:string, label:string, permission:string}} p
 * path: the export route; params: the page's filters (empty values left out);
 * name: the file name without its extension; label: what is exported.
 */
export function ExportLinks({ path, params = {}, name, label, permission }) {
  if (!can(permission)) return null;
  /** @param {string} format */
  const href = (format) => {
    const q = new URLSearchParams({ format });
    for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
    return path + '?' + q.toString();
  };
  const filtered = Object.values(params).some((v) => v);
  return html`<p class="actions" data-reads data-export=${name}>
    <a class="button" data-reads data-format="csv" href=${href('csv')} download=${name + '.csv'}>Export ${label} (CSV)</a>
    <a class="button" data-reads data-format="ndjson" href=${href('ndjson')} download=${name + '.ndjson'}>Export ${label} (NDJSON)</a>
    <small>${filtered ? 'With the filters above.' : 'All of them.'} Streamed: a large export takes a while.</small>
  </p>`;
}
