// The graph explorer's side panel for one relation (a clicked edge): its description, keywords, weight and
// the chunks it was read from, each named by its file and opening it in the document's chunk list.

import {api, currentProject} from './api.js';
import {badge, clear, errorState, h, pageLink} from './dom.js';

let shown = null; // the showRelation() call the panel waits for

function readable(description) {
  return (description || '').split('<SEP>').map((part) => part.trim()).filter(Boolean).join('\n');
}

/** Show the relation between `source` and `target` of `project` in `panel`; open(name) opens an end. */
export async function showRelation(panel, source, target, project, open) {
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
  clear(panel,
    h('h2', {id: 'h-relation'}, 'Relation'),
    h('p', {class: 'relation-ends'},
      h('button', {type: 'button', class: 'link', onclick: () => open(relation.source)}, relation.source),
      h('span', {'aria-hidden': 'true'}, ' — '),
      h('button', {type: 'button', class: 'link', onclick: () => open(relation.target)}, relation.target)),
    h('p', {id: 'relation-keywords'}, keywords.length ? keywords.map((k) => [badge(k, 'keyword'), ' ']) : h('span', {class: 'muted'}, 'No keywords.'),
      h('span', {class: 'muted', id: 'relation-weight'}, ` weight ${relation.weight}`),
      relation.curated ? h('span', {class: 'muted'}, ' · edited by hand') : null),
    h('p', {class: 'description', id: 'relation-description'}, readable(relation.description) || h('span', {class: 'muted'}, 'No description.')),
    h('h3', {}, `Sources (${chunks.length} chunk(s))`),
    chunks.length ? h('ul', {class: 'plain small', id: 'relation-sources'}, chunks.map((c) => h('li', {},
      h('a', {href: pageLink('documents', project, {doc: c.document_id, chunk: c.chunk_id})}, c.file_path || c.document_id),
      h('span', {class: 'muted'}, ` · chunk ${c.chunk_id.slice(0, 12)}`))))
      : h('p', {class: 'muted small'}, 'Added by hand: no source chunk.'));
}
