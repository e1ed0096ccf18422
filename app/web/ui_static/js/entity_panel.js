// The graph explorer's side panel: one entity with its description, aliases, sources and relations, and the
// forms that edit, rename, alias, merge, relate and delete it (entity_forms.js). The panel belongs to the project
// the entity was read from: every action goes there, and an answer read for a project no longer chosen is never
// shown.

import {api, availableOperations, currentProject} from './api.js';
import {act, badge, clear, errorState, h, pageLink, readable, typeColour} from './dom.js';
import {aliasesSection, editForm, entityPath, mergeForm, relationForm, renameForm} from './entity_forms.js';
import {mergesSection} from './merges_panel.js';

let shown = null; // the showEntity() call the panel waits for

/**
 * Show `name` of `project` in `panel`. hooks.open(name) opens another entity; hooks.changed(focus) redraws the
 * graph after an edit (focus: the entity to centre on, or null after a deletion).
 */
export async function showEntity(panel, name, project, graphHooks) {
  const mine = {};
  shown = mine;
  const current = () => shown === mine && project === currentProject();
  clear(panel, h('h2', {id: 'h-entity'}, name), h('p', {}, 'Loading…'));
  let entity;
  try {
    entity = await api(entityPath(name), {params: {project_id: project, relation_limit: 50}});
  } catch (err) {
    if (current()) clear(panel, h('h2', {id: 'h-entity'}, name), errorState(err));
    return;
  }
  const ops = await availableOperations();
  if (!current()) return;
  entity.project = project;
  // An edit that ends after a switch must not redraw the graph of the project now chosen.
  const hooks = {open: graphHooks.open, changed: (focus) => (project === currentProject() ? graphHooks.changed(focus) : null)};
  clear(panel,
    h('h2', {id: 'h-entity'}, h('span', {class: 'dot', style: `background:${typeColour(entity.entity_type)}`}), entity.name),
    h('p', {}, badge(entity.entity_type, 'type'), ` degree ${entity.degree}`, entity.curated ? ' · edited by hand' : '',
      h('span', {class: 'muted'}, ` · project ${project}`)),
    h('p', {class: 'description'}, readable(entity.description) || h('span', {class: 'muted'}, 'No description.')),
    sources(entity),
    relations(entity, hooks),
    aliasesSection(entity, hooks),
    mergesSection(entity, ops, hooks),
    editForm(entity, hooks),
    renameForm(entity, hooks),
    mergeForm(entity, hooks),
    relationForm(entity, hooks),
    h('div', {class: 'actions'}, h('button', {type: 'button', class: 'danger', id: 'entity-delete', onclick: () => remove(entity, hooks)},
      'Delete entity')));
}

function sources(entity) {
  const chunks = entity.source_chunks || [];
  return h('details', {open: chunks.length <= 5}, h('summary', {}, `Sources (${chunks.length} chunk(s))`),
    chunks.length ? h('ul', {class: 'plain small'}, chunks.map((c) => h('li', {},
      h('a', {href: pageLink('documents', entity.project, {doc: c.document_id, chunk: c.chunk_id})},
        c.file_path || c.document_id), h('span', {class: 'muted'}, ` · ${c.chunk_id.slice(0, 16)}`))))
      : h('p', {class: 'muted small'}, 'Added by hand: no source chunk.'));
}

function relations(entity, hooks) {
  const list = entity.relations || [];
  return h('details', {open: true}, h('summary', {}, `Relations (${entity.relations_total})`),
    list.length ? h('ul', {class: 'plain small relations'}, list.map((r) => {
      const other = r.source === entity.name ? r.target : r.source;
      return h('li', {},
        h('button', {type: 'button', class: 'link', onclick: () => hooks.open(other)}, other),
        h('span', {class: 'muted'}, ` · ${r.keywords || 'related'} · weight ${r.weight}`),
        h('div', {class: 'description'}, readable(r.description)));
    })) : h('p', {class: 'muted small'}, 'No relations.'));
}

async function remove(entity, hooks) {
  if (!confirm(`Delete the entity "${entity.name}" and its ${entity.relations_total} relation(s) from project "${entity.project}"?`)) return;
  await act(() => api(entityPath(entity.name), {method: 'DELETE', params: {project_id: entity.project}}),
    (result) => `Deleted ${result.name} and ${result.relations_deleted} relation(s)`, 'Could not delete',
    () => hooks.changed(null));
}
