// Entry point: hash routing between the four pages, the project switcher and the API-key prompt.

import {api, ApiError, apiKey, currentProject, MESSAGES, onKeyNeeded, onProjectForbidden, setApiKey, setCurrentProject} from './api.js';
import {$, errorText, h, toast} from './dom.js';
import {documentsPage} from './documents.js';
import {graphPage} from './graph.js';
import {projectsPage} from './projects.js';
import {queryPage} from './query.js';

const PAGES = {documents: documentsPage, query: queryPage, graph: graphPage, projects: projectsPage};
const started = new Set();
let shown = null;

function parseHash() {
  const [path, query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  const name = PAGES[path] ? path : 'documents';
  return {name, params: new URLSearchParams(query)};
}

function route() {
  const {name, params} = parseHash();
  const page = PAGES[name];
  const section = $(`#page-${name}`);
  if (!started.has(name)) {
    started.add(name);
    page.init(section);
  }
  if (shown !== name) {
    for (const [other, otherPage] of Object.entries(PAGES)) {
      const visible = other === name;
      $(`#page-${other}`).hidden = !visible;
      if (!visible && shown === other) otherPage.hide?.();
    }
    for (const link of document.querySelectorAll('.tabs a')) {
      if (link.dataset.page === name) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    document.title = `${page.title} · LightRAG Service`;
    shown = name;
  }
  page.show(params);
}

// ----- API key prompt -----

function askForKey(reason) {
  const dialog = $('#key-dialog');
  const input = $('#key-input');
  $('#key-reason').textContent = reason || MESSAGES.keyNeeded;
  $('#key-reason').classList.toggle('error-text', Boolean(apiKey()));
  input.value = '';
  return new Promise((resolve, reject) => {
    const done = (key) => {
      $('#key-form').removeEventListener('submit', submit);
      $('#key-cancel').removeEventListener('click', cancel);
      dialog.removeEventListener('cancel', cancel);
      if (dialog.open) dialog.close();
      if (key) resolve(key);
      else reject(new ApiError(401, 'No API key given', 'missing_api_key'));
    };
    const submit = (event) => {
      event.preventDefault();
      if (input.value.trim()) done(input.value.trim());
    };
    const cancel = (event) => {
      event.preventDefault();
      done(null);
    };
    $('#key-form').addEventListener('submit', submit);
    $('#key-cancel').addEventListener('click', cancel);
    dialog.addEventListener('cancel', cancel);
    if (!dialog.open) dialog.showModal();
    input.focus();
  });
}

async function changeKey() {
  try {
    setApiKey(await askForKey('Enter the API key to use for this tab.'));
    await loadProjects();
    toast('API key saved for this tab');
    route();
  } catch {
    // cancelled
  }
}

// ----- project switcher -----

/**
 * Fill the project switcher with the projects this key may use, and only those. When the chosen project is
 * not one of them (a key scoped to other projects, or a deleted project), switch to one it may use.
 */
export async function loadProjects() {
  const select = $('#project-select');
  try {
    const {projects} = await api('projects');
    const current = currentProject();
    const ids = projects.map((p) => p.id);
    if (ids.length && !ids.includes(current)) {
      const allowed = ids.length > 5 ? `${ids.slice(0, 5).join(', ')}…` : ids.join(', ');
      toast(`This key may not use the project "${current}": switched to "${ids[0]}" (it may use ${allowed}).`, 'warn');
      select.replaceChildren(...ids.map((id) => h('option', {value: id, selected: id === ids[0]}, id)));
      setCurrentProject(ids[0]);
      return;
    }
    if (!ids.length) ids.push(current);
    select.replaceChildren(...ids.map((id) => h('option', {value: id, selected: id === current}, id)));
  } catch (err) {
    if (err.status !== 401) toast(`Could not list the projects: ${errorText(err)}`, 'error');
  }
}

window.addEventListener('projects-changed', loadProjects);

/** A link's address names its project (pageLink): once another is chosen, a reload must not switch back. */
function forgetOtherProjectLink(project) {
  const {name, params} = parseHash();
  if (params.has('project') && params.get('project') !== project) history.replaceState(null, '', `#/${name}`);
}

let switching = false;

function start() {
  onKeyNeeded(askForKey);
  onProjectForbidden(() => {
    // Several refused calls at once: one switch.
    if (switching) return;
    switching = true;
    loadProjects().finally(() => { switching = false; });
  });
  $('#key-button').addEventListener('click', changeKey);
  $('#project-select').addEventListener('change', (event) => setCurrentProject(event.target.value));
  window.addEventListener('project-changed', (event) => {
    forgetOtherProjectLink(event.detail);
    for (const name of started) PAGES[name].projectChanged?.();
    loadProjects();
  });
  window.addEventListener('hashchange', route);
  if (!location.hash) history.replaceState(null, '', '#/documents');
  route();
  loadProjects();
}

start();
