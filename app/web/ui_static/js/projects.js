// Projects and settings: the projects with their counts and settings, switching, creating, editing a project's
// settings and deleting it, the export downloads of the current project, the API key of this tab, the
// service's health and the model check (project_admin.js).

import {api, apiKey, currentProject, MESSAGES, setApiKey, setCurrentProject} from './api.js';
import {$, clear, emptyState, errorState, errorText, h, saveBlob, toast} from './dom.js';
import {deleteProject, editSettings, healthCard, modelCheck} from './project_admin.js';

const FORMATS = [
  ['xlsx', 'Excel (xlsx)'], ['csv', 'CSV (zip)'], ['json', 'JSON'], ['md', 'Markdown'], ['txt', 'Text'],
];

let root;

export const projectsPage = {
  title: 'Projects & settings',
  init(section) {
    root = section;
    section.append(
      h('h1', {id: 'h-projects'}, 'Projects & settings'),
      h('div', {class: 'columns'},
        h('section', {class: 'card', 'aria-labelledby': 'h-export'}, h('h2', {id: 'h-export'}, 'Export'), exportPanel()),
        h('section', {class: 'card', 'aria-labelledby': 'h-create'}, h('h2', {id: 'h-create'}, 'New project'), createForm())),
      h('section', {class: 'card', 'aria-labelledby': 'h-project-list'},
        h('h2', {id: 'h-project-list'}, 'Projects'), h('div', {id: 'project-list'}, 'Loading…'),
        h('div', {id: 'project-edit'})),
      h('div', {class: 'columns'},
        h('section', {class: 'card', 'aria-labelledby': 'h-key'}, h('h2', {id: 'h-key'}, 'API key'), h('div', {id: 'key-state'})),
        h('section', {class: 'card', 'aria-labelledby': 'h-health'}, h('h2', {id: 'h-health'}, 'Service'), h('div', {id: 'health'}),
          h('div', {class: 'row'}, h('button', {type: 'button', class: 'secondary', id: 'check-model',
            onclick: (e) => modelCheck($('#model-check', root), e.currentTarget)}, 'Check the model')),
          h('div', {id: 'model-check', 'aria-live': 'polite'}))));
  },
  show() {
    loadProjects();
    renderKeyState();
    loadHealth();
  },
  projectChanged() {
    if (!root.hidden) this.show();
  },
};

function exportPanel() {
  return h('div', {},
    h('p', {}, 'Download the current project\'s graph (', h('span', {id: 'export-project'}, currentProject()), ').'),
    h('label', {class: 'check'}, h('input', {type: 'checkbox', id: 'export-chunks'}), ' Include chunks'),
    h('label', {class: 'check'}, h('input', {type: 'checkbox', id: 'export-vectors'}), ' Include vectors'),
    h('div', {class: 'row wrap'}, FORMATS.map(([fmt, label]) => h('button', {type: 'button', class: 'secondary',
      id: `export-${fmt}`, onclick: (e) => download(fmt, e.currentTarget)}, label))),
    h('p', {id: 'export-status', class: 'muted', 'aria-live': 'polite'}));
}

async function download(fmt, button) {
  const project = currentProject();
  const status = $('#export-status', root);
  button.disabled = true;
  clear(status, `Preparing ${fmt} of ${project}…`);
  try {
    const response = await api('export', {raw: true, params: {project_id: project, format: fmt,
      include_chunks: $('#export-chunks', root).checked || undefined,
      include_vectors: $('#export-vectors', root).checked || undefined}});
    const disposition = response.headers.get('Content-Disposition') || '';
    const filename = /filename="?([^";]+)"?/.exec(disposition)?.[1] || `${project}.${fmt}`;
    const blob = await response.blob();
    saveBlob(blob, filename);
    clear(status, `Downloaded ${filename} (${blob.size} bytes).`);
  } catch (err) {
    clear(status, h('span', {class: 'error-text'}, `Export failed: ${errorText(err)}`));
  } finally {
    button.disabled = false;
  }
}

function createForm() {
  const id = h('input', {id: 'new-project-id', type: 'text', required: true, pattern: '[a-z0-9][a-z0-9_\\-]{0,62}', placeholder: 'acme-handbook'});
  const name = h('input', {id: 'new-project-name', type: 'text', placeholder: 'ACME handbook'});
  return h('form', {onsubmit: async (e) => {
    e.preventDefault();
    try {
      const project = await api('projects', {method: 'POST', json: {id: id.value.trim(), name: name.value.trim() || undefined}});
      toast(`Created project ${project.id}`);
      id.value = '';
      name.value = '';
      window.dispatchEvent(new Event('projects-changed'));
      setCurrentProject(project.id);
    } catch (err) {
      toast(`Could not create the project: ${errorText(err)}`, 'error');
    }
  }},
  h('label', {for: 'new-project-id'}, 'Id (lower-case letters, digits, - and _)'), id,
  h('label', {for: 'new-project-name'}, 'Name'), name,
  h('button', {type: 'submit'}, 'Create and switch'));
}

async function loadProjects() {
  $('#export-project', root).textContent = currentProject();
  const box = $('#project-list', root);
  try {
    const {projects} = await api('projects');
    if (!projects.length) { clear(box, emptyState('No project is visible to this key.')); return; }
    clear(box, h('div', {class: 'table-wrap'}, h('table', {},
      h('thead', {}, h('tr', {}, ['Project', 'Documents', 'Chunks', 'Entities', 'Relations', 'Settings', ''].map((t) => h('th', {scope: 'col'}, t)))),
      h('tbody', {}, projects.map((p) => h('tr', {class: p.id === currentProject() ? 'current' : null},
        h('td', {}, h('strong', {}, p.id), p.name && p.name !== p.id ? h('div', {class: 'muted small'}, p.name) : null),
        h('td', {class: 'num'}, p.counts.documents), h('td', {class: 'num'}, p.counts.chunks),
        h('td', {class: 'num'}, p.counts.entities), h('td', {class: 'num'}, p.counts.relations),
        h('td', {class: 'small'}, settingsText(p.effective_settings)),
        h('td', {class: 'row-actions'}, p.id === currentProject() ? h('span', {class: 'muted'}, 'current ')
          : h('button', {type: 'button', class: 'small', onclick: () => setCurrentProject(p.id)}, `Use ${p.id}`),
        h('button', {type: 'button', class: 'small secondary', 'aria-label': `Settings of ${p.id}`,
          onclick: () => editSettings($('#project-edit', root), p, loadProjects)}, 'Settings'),
        h('button', {type: 'button', class: 'small danger', 'aria-label': `Delete ${p.id}`,
          onclick: () => deleteProject(p, loadProjects)}, 'Delete'))))))));
  } catch (err) {
    clear(box, errorState(err, loadProjects));
  }
}

function settingsText(s) {
  return `${s.language}; chunks of ${s.chunk_size} tokens (overlap ${s.chunk_overlap_size}); gleaning ${s.max_gleaning}; `
    + `types: ${s.entity_types.join(', ')}`;
}

function renderKeyState() {
  const key = apiKey();
  clear($('#key-state', root),
    h('p', {}, key ? `A key is set for this tab (…${key.slice(-4)}).` : 'No key set: the page asks for one when the service requires it.'),
    h('div', {class: 'row'},
      h('button', {type: 'button', class: 'secondary', onclick: () => $('#key-button').click()}, key ? 'Change key' : 'Set key'),
      key ? h('button', {type: 'button', class: 'secondary', onclick: () => { setApiKey(null); renderKeyState(); toast('Key forgotten'); }}, 'Forget key') : null));
}

async function loadHealth() {
  const box = $('#health', root);
  try {
    const response = await fetch(new URL('../health', document.baseURI));
    clear(box, healthCard(await response.json()));
  } catch {
    clear(box, errorState(new Error(MESSAGES.unreachable), loadHealth));
  }
}
