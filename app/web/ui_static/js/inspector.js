// The context inspector: the entities, relations and chunks the last answer was built from. Collapsed until
// asked for, and each item cut to a few lines with a button to show all of it.

import {clear, emptyState, h, pageLink, typeColour} from './dom.js';

const SHORT = 240; // characters of an item shown before "Show all"

export function inspector() {
  return h('details', {class: 'card inspector', id: 'inspector-box'},
    h('summary', {}, h('h2', {id: 'h-inspector'}, 'Context inspector'), h('span', {class: 'muted small', id: 'inspector-counts'})),
    h('div', {id: 'inspector'}));
}

/** Text cut at SHORT characters, with a button that shows the rest (and hides it again). */
function truncated(tag, text, attrs = {}) {
  const full = String(text ?? '');
  if (full.length <= SHORT) return h(tag, attrs, full);
  const body = h(tag, attrs, `${full.slice(0, SHORT)}…`);
  const toggle = h('button', {type: 'button', class: 'link small', 'aria-expanded': 'false', onclick: () => {
    const open = toggle.getAttribute('aria-expanded') !== 'true';
    body.textContent = open ? full : `${full.slice(0, SHORT)}…`;
    toggle.setAttribute('aria-expanded', String(open));
    toggle.textContent = open ? 'Show less' : `Show all (${full.length} chars)`;
  }}, `Show all (${full.length} chars)`);
  return h('div', {class: 'truncated'}, body, toggle);
}

export function renderInspector(box, counts, final, project) {
  if (!final) {
    clear(counts);
    clear(box, emptyState('The entities, relations and chunks the last answer was built from appear here.'));
    return;
  }
  const {entities = [], relations = [], chunks = []} = final.context || {};
  const kw = final.keywords || {};
  clear(counts, ` ${entities.length} entities · ${relations.length} relations · ${chunks.length} chunks`);
  clear(box,
    h('p', {class: 'small'}, h('strong', {}, 'Keywords: '),
      [...(kw.high_level || []), ...(kw.low_level || [])].join(', ') || '—'),
    h('details', {}, h('summary', {}, `Entities (${entities.length})`),
      entities.length ? h('ul', {class: 'plain'}, entities.map((e) => h('li', {},
        h('span', {class: 'dot', style: `background:${typeColour(e.type)}`}),
        h('a', {href: pageLink('graph', project, {entity: e.name})}, e.name),
        h('span', {class: 'muted'}, ` ${e.type} · degree ${e.degree}`),
        truncated('div', e.description, {class: 'small'})))) : h('p', {class: 'muted'}, 'None.')),
    h('details', {}, h('summary', {}, `Relations (${relations.length})`),
      relations.length ? h('ul', {class: 'plain'}, relations.map((r) => h('li', {},
        h('strong', {}, `${r.source} → ${r.target}`), h('span', {class: 'muted'}, ` weight ${r.weight} · ${r.keywords}`),
        truncated('div', r.description, {class: 'small'})))) : h('p', {class: 'muted'}, 'None.')),
    h('details', {}, h('summary', {}, `Chunks (${chunks.length})`),
      chunks.length ? h('ol', {class: 'plain'}, chunks.map((c) => h('li', {id: `ctx-chunk-${c.id}`},
        h('div', {class: 'muted small'}, `[${c.reference_id || '–'}] ${c.file_path || c.document_id} · via ${c.source}`,
          c.rerank_score !== null && c.rerank_score !== undefined ? ` · rerank ${c.rerank_score.toFixed(3)}` : '',
          ` · ${c.content.length} chars`),
        truncated('pre', c.content)))) : h('p', {class: 'muted'}, 'None.')));
}
