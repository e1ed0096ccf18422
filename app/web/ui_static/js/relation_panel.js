// The graph explorer's side panel for one relation (a clicked edge): its description, keywords, weight and
// the chunks it was read from, each named by its file and opening it in the document's chunk list; and the forms
// that edit and delete it, acting on the project it was read from.

import {api, currentProject} from './api.js';
import {act, badge, clear, errorState, h, pageLink, readable, stored, toast} from './dom.js';

let shown = null; // the showRelation() call the panel waits for


/**
 * Show the relation between `source` and `target` of `project` in `panel`. hooks.open(name) opens an end;
 * hooks.changed(relation) follows an edit (the relation as saved) or a deletion (null).
 */
export async function showRelation(panel, source, target, project, hooks) {
  const mine = {};
  shown = mine;
  const title = () => h('h2', {id: 'h-relation'}, `${source} — ${target}`);
  clear(panel, title(), h('p', {}, 'Loading…'));
  let relation;
  try {
    relation = await api('relations/detail', {params: {project_id: project, source, target}});
  } catch (err) {
    if (shown === mine && project === currentProject()) clear(panel, title(), errorState(err));
    return;
  }
  if (shown !== mine || project !== currentProject()) return;
  const keywords = relation.keywords.split(',').map((k) => k.trim()).filter(Boolean);
  const chunks = relation.source_chunks;
  // A change that ends after a project switch must not touch the graph of the project now chosen.
  const changed = (saved) => (project === currentProject() ? hooks.changed(saved) : null);
  clear(panel,
    h('h2', {id: 'h-relation'}, 'Relation'),
    h('p', {class: 'relation-ends'},
      h('button', {type: 'button', class: 'link', onclick: () => hooks.open(relation.source)}, relation.source),
      h('span', {'aria-hidden': 'true'}, ' — '),
      h('button', {type: 'button', class: 'link', onclick: () => hooks.open(relation.target)}, relation.target)),
    h('p', {id: 'relation-keywords'}, keywords.length ? keywords.map((k) => [badge(k, 'keyword'), ' ']) : h('span', {class: 'muted'}, 'No keywords.'),
      h('span', {class: 'muted', id: 'relation-weight'}, ` weight ${relation.weight}`),
      relation.curated ? h('span', {class: 'muted'}, ' · edited by hand') : null),
    h('p', {class: 'description', id: 'relation-description'}, readable(relation.description) || h('span', {class: 'muted'}, 'No description.')),
    h('h3', {}, `Sources (${chunks.length} chunk(s))`),
    chunks.length ? h('ul', {class: 'plain small', id: 'relation-sources'}, chunks.map((c) => h('li', {},
      h('a', {href: pageLink('documents', project, {doc: c.document_id, chunk: c.chunk_id})}, c.file_path || c.document_id),
      h('span', {class: 'muted'}, ` · chunk ${c.chunk_id.slice(0, 12)}`))))
      : h('p', {class: 'muted small'}, 'Added by hand: no source chunk.'),
    editForm(relation, project, changed),
    h('div', {class: 'actions'}, h('button', {type: 'button', class: 'danger', id: 'relation-delete',
      onclick: () => remove(relation, project, changed)}, 'Delete relation')));
}

function editForm(relation, project, changed) {
  const description = h('textarea', {id: 'relation-edit-description', rows: 4}, readable(relation.description));
  const keywords = h('input', {id: 'relation-edit-keywords', type: 'text', value: relation.keywords});
  const weight = h('input', {id: 'relation-edit-weight', type: 'number', min: '0.01', step: 'any', value: String(relation.weight)});
  return h('details', {}, h('summary', {}, 'Edit'),
    h('form', {id: 'relation-edit', onsubmit: async (e) => {
      e.preventDefault();
      const changes = {};
      const text = stored(description.value); // one line per fragment, as shown
      if (text && text !== stored(readable(relation.description))) changes.description = text;
      if (keywords.value.trim() !== relation.keywords) changes.keywords = keywords.value.trim();
      if (Number(weight.value) !== relation.weight) changes.weight = Number(weight.value);
      if (!Object.keys(changes).length) { toast('Nothing changed'); return; }
      await act(() => api('relations', {method: 'PATCH', json: {project_id: project, source: relation.source,
        target: relation.target, ...changes}}),
      (saved) => `Saved the relation ${saved.source} — ${saved.target}`, 'Could not save', changed);
    }},
    h('label', {for: 'relation-edit-description'}, 'Description'), description,
    h('label', {for: 'relation-edit-keywords'}, 'Keywords (comma separated)'), keywords,
    h('label', {for: 'relation-edit-weight'}, 'Weight'), weight,
    h('button', {type: 'submit'}, 'Save')));
}

async function remove(relation, project, changed) {
  if (!confirm(`Delete the relation ${relation.source} — ${relation.target} from project "${project}"?`)) return;
  await act(() => api('relations', {method: 'DELETE', params: {project_id: project, source: relation.source, target: relation.target}}),
    () => `Deleted the relation ${relation.source} — ${relation.target}`, 'Could not delete', () => changed(null));
}
