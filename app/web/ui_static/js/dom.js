// Small DOM helpers shared by the pages: element building, notices, formatting.

/** h('button', {class: 'x', onclick: fn}, 'text', child) → element. Attributes set to null/false are skipped. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (name in el && typeof value !== 'string') el[name] = value;
    else el.setAttribute(name, value === true ? '' : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** The address of a page showing a project's data: it names the project, so the link never shows another. */
export function pageLink(page, project, params = {}) {
  const query = new URLSearchParams({project});
  for (const [name, value] of Object.entries(params)) if (value) query.set(name, value);
  return `#/${page}?${query}`;
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

/**
 * Run `call` (an API request), tell what it did (`done(result)`) and go on with `then(result)`; a failure, of
 * the request or of what follows it, is told as "`failed`: reason".
 */
export async function act(call, done, failed, then) {
  try {
    const result = await call();
    toast(done(result));
    await then(result);
  } catch (err) {
    toast(`${failed}: ${errorText(err)}`, 'error');
  }
}

/**
 * A notice in the live region (read out by screen readers), with a button that dismisses it. The region sits
 * in the page's flow under the top bar, so a notice never covers a button. Information goes by itself after
 * a few seconds; warnings and errors stay until dismissed (or replaced by newer ones).
 */
export function toast(message, kind = 'info') {
  const box = $('#toasts');
  const item = h('div', {class: `toast toast-${kind}`, role: kind === 'info' ? 'status' : 'alert'},
    h('span', {class: 'toast-text'}, message),
    h('button', {type: 'button', class: 'toast-close', 'aria-label': 'Dismiss', title: 'Dismiss', onclick: () => item.remove()}, '×'));
  box.append(item);
  while (box.children.length > 4) box.firstElementChild.remove();
  if (kind === 'info') setTimeout(() => item.remove(), 5000);
}

/** A description merged from several sources is stored joined by <SEP>: one paragraph each on screen. */
export function readable(description) {
  return (description || '').split('<SEP>').map((part) => part.trim()).filter(Boolean).join('\n');
}

/** What a person edited as `readable` text, stored again: each line a fragment. */
export function stored(text) {
  return text.split('\n').map((line) => line.trim()).filter(Boolean).join('<SEP>');
}

export function emptyState(text, ...extra) {
  return h('div', {class: 'empty'}, h('p', {}, text), ...extra);
}

export function errorState(err, retry) {
  return h('div', {class: 'error-state', role: 'alert'},
    h('p', {}, h('strong', {}, 'Could not load: '), errorText(err)),
    retry ? h('button', {type: 'button', onclick: retry}, 'Try again') : null);
}

const PEOPLE_CODES = new Set(['unreachable', 'project_forbidden', 'missing_api_key', 'invalid_api_key']);

export function errorText(err) {
  if (!err) return 'unknown error';
  // The service's codes help whoever reads the API, not people: only unexpected ones are shown.
  if (err.code && !PEOPLE_CODES.has(err.code)) return `${err.message} (${err.code})`;
  return err.message || String(err);
}

const dateFormat = new Intl.DateTimeFormat(undefined, {dateStyle: 'medium', timeStyle: 'short'});

export function formatDate(value) {
  return value ? dateFormat.format(new Date(value)) : '—';
}

export function formatSize(chars) {
  if (chars < 1000) return `${chars} chars`;
  if (chars < 1_000_000) return `${(chars / 1000).toFixed(1)} k chars`;
  return `${(chars / 1_000_000).toFixed(1)} M chars`;
}

export function formatBytes(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** The same colour for the same entity type on every page. */
const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7',
  '#9c755f', '#2f8f9d', '#8cd17d', '#d37295'];

export function typeColour(type) {
  let hash = 0;
  for (const ch of String(type || 'unknown').toLowerCase()) hash = (hash * 31 + ch.codePointAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

export function badge(text, kind = text) {
  return h('span', {class: `badge badge-${kind}`}, text);
}

/** Save a Blob as a file through a temporary link. */
export function saveBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = h('a', {href: url, download: filename, hidden: true});
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
