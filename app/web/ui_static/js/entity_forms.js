// The entity panel's forms: edit, rename, aliases (add, detach), merge others into it, add a relation from it,
// and a new entity. Each acts on the project the entity was read from (entity.project) and, once done, calls
// hooks.changed(focus) to redraw the graph around `focus` and reopen it in the panel.

import {api} from './api.js';
import {act, h, readable, stored, toast} from './dom.js';

const STRATEGIES = ['concatenate', 'keep_first', 'keep_longest', 'llm_summarize'];

export function entityPath(name) {
  return `entities/${encodeURIComponent(name)}`;
}

/** Run `call` and say so (`act`), then redraw the graph around `focus` and reopen it. */
function attempt(call, done, failed, hooks, focus) {
  return act(call, done, failed, () => hooks.changed(focus));
}

let datalists = 0;

/**
 * A text input offering the entity names of `projectOf()` (read when asked: the graph's search box follows
 * the project chosen) as one types, in its own datalist (`listId`, else a fresh id); an answer arriving after
 * the project changed is dropped.
 */
export function entityNameInput(projectOf, attrs, listId = `entity-names-${++datalists}`) {
  const list = h('datalist', {id: listId});
  let timer = null;
  const input = h('input', {type: 'text', autocomplete: 'off', list: list.id, ...attrs, oninput: () => {
    clearTimeout(timer);
    const q = input.value.trim();
    if (!q) return;
    timer = setTimeout(async () => {
      const project = projectOf();
      try {
        const {entities} = await api('entities', {params: {project_id: project, q, limit: 20}});
        if (project === projectOf()) list.replaceChildren(...entities.map((e) => h('option', {value: e.name}, e.entity_type)));
      } catch {
        // suggestions are optional
      }
    }, 200);
  }});
  return [input, list];
}

export function editForm(entity, hooks) {
  const description = h('textarea', {id: 'entity-description', rows: 6}, readable(entity.description));
  const type = h('input', {id: 'entity-type', type: 'text', value: entity.entity_type});
  return h('details', {}, h('summary', {}, 'Edit'),
    h('form', {onsubmit: (e) => {
      e.preventDefault();
      const changes = {};
      const text = stored(description.value); // one line per fragment, as shown
      if (text && text !== stored(readable(entity.description))) changes.description = text;
      if (type.value.trim() && type.value !== entity.entity_type) changes.entity_type = type.value.trim();
      if (!Object.keys(changes).length) { toast('Nothing changed'); return; }
      patch(entity, changes, hooks, entity.name);
    }},
    h('label', {for: 'entity-description'}, 'Description'), description,
    h('label', {for: 'entity-type'}, 'Type'), type,
    h('button', {type: 'submit'}, 'Save')));
}

export function renameForm(entity, hooks) {
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

function patch(entity, changes, hooks, focus) {
  return attempt(() => api(entityPath(entity.name), {method: 'PATCH', json: {project_id: entity.project, ...changes}}),
    () => `Saved ${focus}`, 'Could not save', hooks, focus);
}

/** The entity's other names, each detachable, and a form adding one. */
export function aliasesSection(entity, hooks) {
  const aliases = entity.aliases || [];
  const path = `${entityPath(entity.name)}/aliases`;
  const json = {project_id: entity.project};
  const input = h('input', {id: 'alias-new', type: 'text', required: true, placeholder: 'A. Chen'});
  const detach = (alias) => {
    if (!confirm(`Detach the alias "${alias}" from ${entity.name} in project "${entity.project}"? Lookups by it no longer `
      + 'reach this entity, and later documents using it make a node of their own.')) return;
    attempt(() => api(`${path}/detach`, {method: 'POST', json: {...json, alias}}),
      () => `Detached ${alias} from ${entity.name}`, 'Could not detach', hooks, entity.name);
  };
  return h('details', {id: 'entity-aliases', open: aliases.length > 0}, h('summary', {}, `Aliases (${aliases.length})`),
    aliases.length ? h('ul', {class: 'plain small', id: 'alias-list'}, aliases.map((alias) => h('li', {class: 'alias'},
      h('span', {class: 'alias-name'}, alias), ' ',
      h('button', {type: 'button', class: 'small secondary alias-detach', 'aria-label': `Detach ${alias}`,
        onclick: () => detach(alias)}, 'Detach'))))
      : h('p', {class: 'muted small'}, 'No other names.'),
    h('form', {id: 'alias-form', onsubmit: (e) => {
      e.preventDefault();
      const alias = input.value.trim();
      if (!alias) return;
      attempt(() => api(path, {method: 'POST', json: {...json, alias}}),
        () => `Added ${alias} as another name of ${entity.name}`, 'Could not add the alias', hooks, entity.name);
    }},
    h('label', {for: 'alias-new'}, 'Add another name'), input,
    h('p', {class: 'hint'}, 'Lookups and later documents using this name reach this entity.'),
    h('button', {type: 'submit'}, 'Add alias')));
}

/**
 * Merge others into this one. Names are added one at a time (Enter or Add), so a name holding a comma
 * ("Washington, D.C.") stays one name; a name left typed in the box is merged too.
 */
export function mergeForm(entity, hooks) {
  const chosen = [];
  const [input, list] = entityNameInput(() => entity.project, {id: 'merge-sources', placeholder: 'A. Chen'});
  const chips = h('ul', {class: 'plain chips', id: 'merge-chosen', 'aria-label': 'Entities to merge'});
  const render = () => chips.replaceChildren(...chosen.map((name, i) => h('li', {class: 'chip'}, name,
    h('button', {type: 'button', class: 'chip-remove', 'aria-label': `Remove ${name}`, title: 'Remove',
      onclick: () => { chosen.splice(i, 1); render(); }}, '×'))));
  const add = () => {
    const name = input.value.trim();
    if (name && name !== entity.name && !chosen.includes(name)) chosen.push(name);
    input.value = '';
    render();
  };
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && input.value.trim()) { e.preventDefault(); add(); }
  });
  const strategy = h('select', {id: 'merge-strategy'}, STRATEGIES.map((s) => h('option', {value: s}, s)));
  return h('details', {}, h('summary', {}, 'Merge others into this one'),
    h('form', {onsubmit: async (e) => {
      e.preventDefault();
      add();
      if (!chosen.length) { toast('Name the entities to merge into this one', 'error'); input.focus(); return; }
      if (!confirm(`Merge ${chosen.join('; ')} into ${entity.name} in project "${entity.project}"?`)) return;
      await attempt(() => api('entities/merge', {method: 'POST', json: {project_id: entity.project,
        source_entities: [...chosen], target_entity: entity.name, strategy: strategy.value}}),
      (report) => `Merged ${report.merged_sources.join('; ')} into ${report.target}: ${report.relations_redirected} relation(s) redirected`,
      'Merge failed', hooks, entity.name);
    }},
    h('label', {for: 'merge-sources'}, 'Entity to merge'),
    h('div', {class: 'row'}, input, list, h('button', {type: 'button', class: 'secondary', id: 'merge-add', onclick: add}, 'Add')),
    chips,
    h('label', {for: 'merge-strategy'}, 'Descriptions'), strategy,
    h('button', {type: 'submit', id: 'merge-submit'}, 'Merge')));
}

/** A relation from this entity to another, written by hand. */
export function relationForm(entity, hooks) {
  const [target, list] = entityNameInput(() => entity.project, {id: 'relation-new-target', required: true});
  const description = h('textarea', {id: 'relation-new-description', rows: 3, required: true});
  const keywords = h('input', {id: 'relation-new-keywords', type: 'text', placeholder: 'works with, mentors'});
  const weight = h('input', {id: 'relation-new-weight', type: 'number', min: '0.01', step: 'any', value: '1'});
  return h('details', {}, h('summary', {}, 'Add a relation'),
    h('form', {id: 'relation-new', onsubmit: (e) => {
      e.preventDefault();
      const other = target.value.trim();
      attempt(() => api('relations', {method: 'POST', json: {project_id: entity.project, source: entity.name,
        target: other, description: description.value.trim(), keywords: keywords.value.trim(), weight: Number(weight.value)}}),
      () => `Related ${entity.name} to ${other}`, 'Could not add the relation', hooks, entity.name);
    }},
    h('label', {for: 'relation-new-target'}, 'To entity'), target, list,
    h('label', {for: 'relation-new-description'}, 'Description'), description,
    h('label', {for: 'relation-new-keywords'}, 'Keywords (comma separated)'), keywords,
    h('label', {for: 'relation-new-weight'}, 'Weight'), weight,
    h('button', {type: 'submit'}, 'Add relation')));
}

/** A form in `panel` creating an entity in `project`; hooks.changed(name) shows it once made. */
export function newEntityForm(project, hooks) {
  const name = h('input', {id: 'entity-create-name', type: 'text', required: true});
  const type = h('input', {id: 'entity-create-type', type: 'text', placeholder: 'person, organization, …'});
  const description = h('textarea', {id: 'entity-create-description', rows: 4, required: true});
  return [h('h2', {id: 'h-entity'}, 'New entity'), h('p', {class: 'muted small'}, `In project ${project}`),
    h('form', {id: 'entity-create', onsubmit: (e) => {
      e.preventDefault();
      const made = name.value.trim();
      attempt(() => api('entities', {method: 'POST', json: {project_id: project, name: made,
        entity_type: type.value.trim() || undefined, description: description.value.trim()}}),
      () => `Created ${made}`, 'Could not create the entity', hooks, made);
    }},
    h('label', {for: 'entity-create-name'}, 'Name'), name,
    h('label', {for: 'entity-create-type'}, 'Type'), type,
    h('label', {for: 'entity-create-description'}, 'Description'), description,
    h('button', {type: 'submit'}, 'Create'))];
}
