// Every call to the service goes through api(): it sends the API key (kept in sessionStorage) as a bearer
// header, and when the service answers 401 it asks for a key and tries again.

const KEY_STORAGE = 'lightrag.apiKey';
const PROJECT_STORAGE = 'lightrag.project';

// The UI lives at <service>/ui/, so the API is one level up (this also holds behind a path prefix).
export const API_BASE = new URL('..', document.baseURI);

export class ApiError extends Error {
  constructor(status, detail, code) {
    super(detail || `HTTP ${status}`);
    this.status = status;
    this.code = code;
  }
}

export function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE);
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY_STORAGE, key);
  else sessionStorage.removeItem(KEY_STORAGE);
}

// With read replicas the service labels each answer with the WAL position it saw. Sending the highest one back
// makes later reads wait for it, whichever API process (and replica) serves them: read-your-writes.
const READ_AFTER = 'X-Read-After-LSN';
let readAfter = null;

function lsnOrder(text) {
  const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec((text || '').trim());
  return match ? (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`) : null;
}

function noteReadAfter(response) {
  const seen = response.headers.get(READ_AFTER);
  const order = lsnOrder(seen);
  if (order !== null && (readAfter === null || order > lsnOrder(readAfter))) readAfter = seen.trim();
}

let askForKey = async () => { throw new ApiError(401, 'An API key is required', 'missing_api_key'); };
let pendingPrompt = null;
let onProjectRefused = () => {};

// What people read when a key is missing or refused, or the service cannot be reached (never the API's wording).
export const MESSAGES = {
  keyNeeded: 'This service needs an API key. Enter the key you were given by whoever runs it.',
  keyRefused: 'This key was refused: the service does not know it. Check it, or ask for a new one.',
  unreachable: 'Cannot reach the service. It may be stopped or restarting: check that it runs, then try again.',
};

/** Install what happens when the key may not use the chosen project: (project) → void. */
export function onProjectForbidden(handler) {
  onProjectRefused = handler;
}

/** Install the function that asks the user for a key: (reason) → Promise<key>, rejecting when cancelled. */
export function onKeyNeeded(prompt) {
  askForKey = prompt;
}

function promptOnce(reason) {
  // Several calls refused at once share one prompt.
  pendingPrompt ??= askForKey(reason).finally(() => { pendingPrompt = null; });
  return pendingPrompt;
}

export function apiUrl(path, params) {
  const url = new URL(path.replace(/^\//, ''), API_BASE);
  for (const [name, value] of Object.entries(params || {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, value);
  }
  return url;
}

async function errorOf(response) {
  let detail = response.statusText;
  let code;
  try {
    const body = await response.json();
    code = body.code;
    detail = typeof body.detail === 'string' ? body.detail
      : Array.isArray(body.detail) ? body.detail.map((d) => `${(d.loc || []).slice(1).join('.')}: ${d.msg}`).join('; ')
        : JSON.stringify(body.detail);
  } catch {
    // not JSON: keep the status text
  }
  return new ApiError(response.status, detail, code);
}

/** The error of a non-2xx answer; a gateway's answer without the service's JSON means the service is down. */
async function refusal(response) {
  const err = await errorOf(response);
  if ([502, 503, 504].includes(response.status) && !err.code) return new ApiError(response.status, MESSAGES.unreachable, 'unreachable');
  if (response.status === 403 && err.code === 'project_forbidden') {
    onProjectRefused(currentProject());
    return new ApiError(403, `This key may not use the project "${currentProject()}".`, 'project_forbidden');
  }
  return err;
}

/**
 * api('documents', {params, method, json, body, raw, signal}) → parsed JSON (or the Response when raw).
 * Non-2xx answers throw ApiError with the service's {detail, code}.
 */
export async function api(path, options = {}) {
  const {params, method = 'GET', json, body, raw = false, signal, headers = {}} = options;
  for (;;) {
    const sent = new Headers(headers);
    const key = apiKey();
    if (key) sent.set('Authorization', `Bearer ${key}`);
    if (readAfter) sent.set(READ_AFTER, readAfter);
    let payload = body;
    if (json !== undefined) {
      sent.set('Content-Type', 'application/json');
      payload = JSON.stringify(json);
    }
    let response;
    try {
      response = await fetch(apiUrl(path, params), {method, headers: sent, body: payload, signal});
    } catch (err) {
      if (err.name === 'AbortError') throw err;
      throw new ApiError(0, MESSAGES.unreachable, 'unreachable');
    }
    noteReadAfter(response);
    if (response.status === 401) {
      setApiKey(await promptOnce(key ? MESSAGES.keyRefused : MESSAGES.keyNeeded));
      continue;
    }
    if (!response.ok) throw await refusal(response);
    if (raw) return response;
    return response.status === 204 ? null : response.json();
  }
}

// ----- the current project, shared by every page -----

export function currentProject() {
  return localStorage.getItem(PROJECT_STORAGE) || 'default';
}

export function setCurrentProject(id) {
  localStorage.setItem(PROJECT_STORAGE, id);
  window.dispatchEvent(new CustomEvent('project-changed', {detail: id}));
}

// ----- optional endpoints (added by newer versions of the service) -----

let operations = null;

/** The set of "METHOD /path" the service offers, read once from its OpenAPI description. */
export async function availableOperations() {
  operations ??= api('openapi.json').then((spec) => {
    const found = new Set();
    for (const [path, item] of Object.entries(spec.paths || {})) {
      for (const method of Object.keys(item)) found.add(`${method.toUpperCase()} ${path}`);
    }
    return found;
  }).catch(() => {
    operations = null; // ask again next time (e.g. once a key is given)
    return new Set();
  });
  return operations;
}
