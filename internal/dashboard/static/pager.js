// Cursor paging for the pages that list more than one screen: the API answers a
// page and the cursor of the next; going back replays the cursors already seen.
import { html, useState, useEffect } from './preact-htm.js';
import { api } from './api.js';
import { useLoad } from './ui.js';

/**
 * Loads `path` (which already has its query, with at least one parameter) a page
 * at a time. A new path starts again at the first page.
 * @param {string} path
 * @returns {{page:any, error:any, reload:()=>void, next:(()=>void)|null, prev:(()=>void)|null, number:number}}
 */
export function usePaged(path) {
  const [stack, setStack] = useState(/** @type {string[]} */ ([]));
  const [from, setFrom] = useState(path);
  useEffect(() => { setStack([]); setFrom(path); }, [path]);
  const cursor = from === path && stack.length ? stack[stack.length - 1] : '';
  const [page, error, reload] = useLoad(() => api('GET', path + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '')), [path, cursor]);
  return {
    page, error, reload, number: stack.length + 1,
    next: page && page.next_cursor ? () => setStack([...stack, page.next_cursor]) : null,
    prev: stack.length ? () => setStack(stack.slice(0, -1)) : null,
  };
}

/** @param {{paged:ReturnType<typeof usePaged>, label:string}} p */
export function Pager({ paged, label }) {
  if (!paged.next && !paged.prev) return null;
  return html`<nav class="pager" aria-label=${label + ' pages'}>
    <button type="button" disabled=${!paged.prev} onClick=${paged.prev}>Previous page</button>
    <span>Page ${paged.number}</span>
    <button type="button" disabled=${!paged.next} onClick=${paged.next}>Next page</button>
  </nav>`;
}
