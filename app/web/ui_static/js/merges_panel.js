// The entity panel's review of entity resolution: the merges into this entity recorded in the merge ledger
// (automatic ones, and accepted suggestions) with their evidence, to accept, reject (undo and keep apart) or
// undo; and the duplicate suggestions that name it, with their evidence, to accept (merge into this entity,
// recorded in the ledger so it can be undone) or reject.

import {api} from './api.js';
import {act, clear, errorText, h, pageLink} from './dom.js';
import {entityPath} from './entity_forms.js';

/**
 * The review section for `entity` (read for entity.project), or null when the service offers neither list.
 * hooks.changed(focus) redraws the graph and the panel after a change.
 */
export function mergesSection(entity, ops, hooks) {
  const parts = [];
  if (ops.has('GET /entities/{name}/merges')) parts.push(automaticMerges(entity, hooks));
  if (ops.has('GET /entities/duplicates')) parts.push(duplicateSuggestions(entity, hooks));
  if (!parts.length) return null;
  return h('details', {id: 'entity-merges', open: true}, h('summary', {}, 'Merges and duplicates'), parts);
}

/** Run `call`, say `label(result)`, redraw the graph around `focus`; "Failed: reason" if it fails. */
function change(label, call, hooks, focus) {
  return act(call, label, 'Failed', () => hooks.changed(focus));
}

function automaticMerges(entity, hooks) {
  const box = h('div', {class: 'small', id: 'entity-merge-ledger'}, 'Reading the merge ledger…');
  api(`${entityPath(entity.name)}/merges`, {params: {project_id: entity.project, limit: 50}}).then((ledger) => {
    const standing = ledger.entries.filter((e) => e.entity === entity.name && ['standing', 'confirmed'].includes(e.status));
    const past = ledger.entries.filter((e) => !standing.includes(e));
    clear(box,
      h('strong', {}, 'Merged: '),
      standing.length ? h('ul', {class: 'plain'}, standing.map((e) => ledgerItem(entity, e, hooks)))
        : h('span', {class: 'muted'}, 'nothing standing.'),
      past.length ? h('p', {class: 'muted'}, past.map((e) => `${e.absorbed.join(', ')} → ${e.entity}: ${e.status}`).join(' · ')) : null);
  }).catch((err) => clear(box, `Merge ledger: ${errorText(err)}`));
  return box;
}

function mergedBy(e) {
  if (e.by === 'judge') return 'LLM judge';
  return e.by === 'review' ? 'accepted suggestion' : `rule ${e.rule}`;
}

function ledgerItem(entity, e, hooks) {
  const names = e.absorbed.join(', ');
  const json = {project_id: entity.project};
  // an accepted suggestion was made in review, not by a document's ingestion
  const doc = e.document_id
    ? h('a', {href: pageLink('documents', entity.project, {doc: e.document_id})}, e.file_name || e.document_id)
    : e.by === 'review' ? null : h('span', {class: 'muted'}, 'no document');
  const button = (cls, text, onclick) => h('button', {type: 'button', class: `small ${cls}`, 'data-entry': String(e.id), onclick}, text);
  return h('li', {class: 'merge-entry', 'data-entry': String(e.id)},
    h('strong', {}, names),
    h('span', {class: 'muted'}, ` · ${mergedBy(e)}${e.retroactive ? ' (retroactive)' : ''}${doc ? ' · ' : ''}`),
    doc,
    e.status === 'confirmed' && e.by !== 'review' ? h('span', {class: 'muted'}, ' · confirmed') : null,
    e.evidence ? h('div', {class: 'description'}, e.evidence) : null,
    h('div', {class: 'actions'},
      e.status === 'standing' ? button('merge-accept', 'Accept', () => change(
        () => `Kept ${names} in ${entity.name}`,
        () => api(`entities/merges/${e.id}/accept`, {method: 'POST', json}), hooks, entity.name)) : null,
      button('merge-undo', 'Undo', () => {
        if (!confirm(`Undo the merge of ${names} into ${entity.name}? ${names} becomes an entity again.`)) return;
        change((r) => `Restored ${r.restored.join(', ') || names}`,
          () => api(`${entityPath(entity.name)}/unmerge`, {method: 'POST', json: {...json, entry_id: e.id}}), hooks, entity.name);
      }),
      button('merge-reject danger', 'Reject', () => {
        if (!confirm(`Reject the merge of ${names} into ${entity.name}? They are separated and never merged again.`)) return;
        change((r) => `Separated ${r.restored.join(', ') || names} for good`,
          () => api(`entities/merges/${e.id}/reject`, {method: 'POST', json}), hooks, entity.name);
      })));
}

function duplicateSuggestions(entity, hooks) {
  const box = h('div', {class: 'small', id: 'entity-duplicates'}, 'Looking for duplicates…');
  api('entities/duplicates', {params: {project_id: entity.project, limit: 200}}).then((found) => {
    const pairs = (found.pairs || []).filter((p) => p.entity_a === entity.name || p.entity_b === entity.name);
    clear(box, h('strong', {}, 'Possible duplicates: '), pairs.length
      ? h('ul', {class: 'plain'}, pairs.map((p) => suggestion(entity, p, hooks)))
      : h('span', {class: 'muted'}, 'none suggested.'));
  }).catch((err) => clear(box, `Duplicates: ${errorText(err)}`));
  return box;
}

function suggestion(entity, pair, hooks) {
  const other = pair.entity_a === entity.name ? pair.entity_b : pair.entity_a;
  return h('li', {class: 'duplicate-pair'},
    h('button', {type: 'button', class: 'link', onclick: () => hooks.open(other)}, other),
    h('span', {class: 'muted'}, ` · score ${pair.score} · ${pair.found_by.join(', ')}`),
    h('ul', {class: 'plain description'}, pair.evidence.map((line) => h('li', {}, line))),
    h('div', {class: 'actions'},
      h('button', {type: 'button', class: 'small duplicate-accept', onclick: () => {
        if (!confirm(`Merge ${other} into ${entity.name}?`)) return;
        change((r) => `Merged ${r.merge.merged_sources.join(', ')} into ${r.merge.target}`,
          () => api('entities/duplicates/accept', {method: 'POST', json: {project_id: entity.project,
            entity: entity.name, duplicate: other}}), hooks, entity.name);
      }}, 'Accept (merge)'),
      h('button', {type: 'button', class: 'small duplicate-reject', onclick: () => change(
        () => `${other} and ${entity.name} are kept apart`,
        () => api('entities/duplicates/reject', {method: 'POST', json: {project_id: entity.project,
          entity_a: entity.name, entity_b: other}}), hooks, entity.name)}, 'Reject')));
}
