// The graph explorer's side panel: one entity with its description, aliases, sources and relations, and the
// forms that edit, rename, merge and delete it. The panel belongs to the project the entity was read from: every
// action goes there, and an answer read for a project no longer chosen is never shown.

import {api, availableOperations, currentProject} from './api.js';
import {badge, clear, errorState, errorText, h, pageLink, toast, typeColour} from './dom.js';
import {mergesSection} from './merges_panel.js';

const STRATEGIES = ['concatenate', 'keep_first', 'keep_longest', 'llm_summarize'];

function entityPath(name) {
  return `entities/${encodeURIComponent(name)}`;
}

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
    entity.aliases?.length ? h('p', {class: 'small'}, h('strong', {}, 'Aliases: '), entity.aliases.join(', ')) : null,
    sources(entity),
    relations(entity, hooks),
    mergesSection(entity, ops, hooks),
    editForm(entity, hooks),
    renameForm(entity, hooks),
    mergeForm(entity, hooks),
    h('div', {class: 'actions'}, h('button', {type: 'button', class: 'danger', id: 'entity-delete', onclick: () => remove(entity, hooks)},
      'Delete entity')));
}

// Descriptions merged from several sources are stored joined by <SEP>: one paragraph each on screen.
function readable(description) {
  return (description || '').split('<SEP>').map((part) => part.trim()).filter(Boolean).join('\n');
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

async function patch(entity, changes, hooks, focus) {
  try {
    await api(entityPath(entity.name), {method: 'PATCH', json: {project_id: entity.project, ...changes}});
    toast(`Saved ${focus}`);
    await hooks.changed(focus);
  } catch (err) {
    toast(`Could not save: ${errorText(err)}`, 'error');
  }
}

function editForm(entity, hooks) {
  const description = h('textarea', {id: 'entity-description', rows: 4}, entity.description);
  const type = h('input', {id: 'entity-type', type: 'text', value: entity.entity_type});
  return h('details', {}, h('summary', {}, 'Edit'),
    h('form', {onsubmit: (e) => {
      e.preventDefault();
      const changes = {};
      if (description.value.trim() && description.value !== entity.description) changes.description = description.value;
      if (type.value.trim() && type.value !== entity.entity_type) changes.entity_type = type.value.trim();
      if (!Object.keys(changes).length) { toast('Nothing changed'); return; }
      patch(entity, changes, hooks, entity.name);
    }},
    h('label', {for: 'entity-description'}, 'Description'), description,
    h('label', {for: 'entity-type'}, 'Type'), type,
    h('button', {type: 'submit'}, 'Save')));
}

function renameForm(entity, hooks) {
  const input = h('input', {id: 'entity-new-name', type: 'text', value: entity.name, required: true});
  return h('details', {}, h('summary', {}, 'Rename'),
    h('form', {onsubmit: (e) => {
      e.preventDefault();
      const newName = input.value.trim();
      if (newName && newName !== entity.name) patch(entity, {new_name: newName}, hooks, newName);
    }},
    h('label', {for: 'entity-new-name'}, 'New name'), input,
    h('p', {class: 'hint'}, 'Every relation follows. To fold this entity into an existing one, use Merge from that one.'),
    h('button', {type: 'submit'}, 'Rename')));
}

function mergeForm(entity, hooks) {
  const sourcesInput = h('input', {id: 'merge-sources', type: 'text', list: 'entity-options', placeholder: 'A. Chen, Alice'});
  const strategy = h('select', {id: 'merge-strategy'}, STRATEGIES.map((s) => h('option', {value: s}, s)));
  return h('details', {}, h('summary', {}, 'Merge others into this one'),
    h('form', {onsubmit: async (e) => {
      e.preventDefault();
      const names = sourcesInput.value.split(',').map((s) => s.trim()).filter((s) => s && s !== entity.name);
      if (!names.length) { toast('Name the entities to merge into this one', 'error'); sourcesInput.focus(); return; }
      if (!confirm(`Merge ${names.join(', ')} into ${entity.name} in project "${entity.project}"?`)) return;
      try {
        const report = await api('entities/merge', {method: 'POST', json: {project_id: entity.project,
          source_entities: names, target_entity: entity.name, strategy: strategy.value}});
        toast(`Merged ${report.merged_sources.join(', ')} into ${report.target}: ${report.relations_redirected} relation(s) redirected`);
        await hooks.changed(entity.name);
      } catch (err) {
        toast(`Merge failed: ${errorText(err)}`, 'error');
      }
    }},
    h('label', {for: 'merge-sources'}, 'Entities to merge (comma separated)'), sourcesInput,
    h('label', {for: 'merge-strategy'}, 'Descriptions'), strategy,
    h('button', {type: 'submit', id: 'merge-submit'}, 'Merge')));
}

async function remove(entity, hooks) {
  if (!confirm(`Delete the entity "${entity.name}" and its ${entity.relations_total} relation(s) from project "${entity.project}"?`)) return;
  try {
    const result = await api(entityPath(entity.name), {method: 'DELETE', params: {project_id: entity.project}});
    toast(`Deleted ${result.name} and ${result.relations_deleted} relation(s)`);
    await hooks.changed(null);
  } catch (err) {
    toast(`Could not delete: ${errorText(err)}`, 'error');
  }
}
