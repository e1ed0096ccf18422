// One answer on the page: its Markdown rendered and sanitised, its claims wrapped (an unsupported one marked),
// its inline markers made links, and one References list of the cited documents only. Hovering or focusing a
// claim lights up its sources; every source link opens its passage in the source viewer.

import {wrapClaims, dropModelReferences, linkMarkers} from './claims.js';
import {renderMarkdown} from './markdown.js';
import {fileName, openSource} from './source_viewer.js';
import {h, pageLink} from './dom.js';

const VERDICT = {
  supported: ['Supported by', ''],
  partial: ['Partly supported by', ' (only partly supported by the sources)'],
  unsupported: ['Not supported by the sources', ' (not supported by the sources)'],
};

/** The documents an answer cites, each with its passages: from the claims, else from the references (only those
 * the answer's markers name, when it has markers). */
export function citedDocuments(final, answer) {
  const refIds = new Map((final?.references || []).map((r) => [r.document_id, r.reference_id]));
  const docs = new Map();
  const add = (documentId, filePath, passage) => {
    const doc = docs.get(documentId) || {document_id: documentId, file_path: filePath, label: refIds.get(documentId),
      passages: []};
    doc.file_path ||= filePath;
    const same = (p) => p.chunk_id === passage.chunk_id && p.start === passage.start && p.end === passage.end;
    if (passage.chunk_id && !doc.passages.some(same)) doc.passages.push({document_id: documentId, file_path: filePath, ...passage});
    docs.set(documentId, doc);
  };
  const claims = final?.claims || [];
  if (claims.length) {
    for (const claim of claims) {
      for (const c of claim.citations || []) add(c.document_id, c.file_path, {chunk_id: c.chunk_id, start: c.start, end: c.end});
    }
  } else {
    const named = new Set([...(answer || '').matchAll(/\[\^?([\w-]{1,40})\]/g)].map((m) => m[1]));
    const refs = final?.references || [];
    const kept = refs.some((r) => named.has(String(r.reference_id))) ? refs.filter((r) => named.has(String(r.reference_id))) : refs;
    for (const ref of kept) {
      const chunks = (final.context?.chunks || []).filter((c) => c.reference_id === ref.reference_id);
      add(ref.document_id, ref.file_path, {chunk_id: chunks[0]?.id});
      for (const c of chunks.slice(1)) add(ref.document_id, ref.file_path, {chunk_id: c.id});
    }
  }
  let next = 1;
  const list = [...docs.values()];
  const taken = new Set(list.map((d) => d.label).filter(Boolean).map(String));
  for (const doc of list) {
    if (doc.label) continue;
    while (taken.has(String(next))) next++;
    doc.label = String(next++);
  }
  return list;
}

const passageKey = (p) => `${p.chunk_id}:${p.start ?? ''}:${p.end ?? ''}`;

function sourceLink(passage, project, attrs, text) {
  return h('a', {...attrs, dataset: {passage: passageKey(passage)}, href: pageLink('documents', project, {doc: passage.document_id, chunk: passage.chunk_id}),
    onclick: (e) => {
      if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return; // a new tab: the Documents page
      e.preventDefault();
      openSource(passage, project);
    }}, text);
}

/** The answer element of a turn: rendered Markdown, and once final, the claims and markers. */
export function renderAnswer(turn, project, id) {
  const el = h('div', {class: 'answer markdown', id, 'aria-busy': turn.streaming ? 'true' : 'false'});
  if (!turn.answer) {
    el.textContent = turn.streaming ? 'Thinking…' : '';
    return {el, references: null};
  }
  el.append(renderMarkdown(turn.answer));
  if (!turn.final) return {el, references: null};
  const docs = citedDocuments(turn.final, turn.answer);
  const claims = turn.final.claims || [];
  const spans = wrapClaims(el, turn.answer, claims);
  dropModelReferences(el);
  const references = referenceList(docs, project);
  spans.forEach((pieces, index) => decorateClaim(pieces, claims[index], index, {el, references, project}));
  linkMarkers(el, (label, node) => markerLink(label, node, {final: turn.final, docs, claims, project}));
  return {el, references};
}

function decorateClaim(pieces, claim, index, {el, references, project}) {
  if (!pieces.length) return;
  const support = VERDICT[claim.support] ? claim.support : 'supported';
  const cited = [...new Set((claim.citations || []).map((c) => fileName(c.file_path, c.document_id)))];
  const [lead, spoken] = VERDICT[support];
  const title = support === 'unsupported' || !cited.length ? VERDICT.unsupported[0] : `${lead}: ${cited.join(', ')}`;
  for (const span of pieces) {
    span.classList.add(`claim-${support}`);
    span.title = title;
  }
  pieces[0].tabIndex = 0;
  if (spoken) pieces.at(-1).after(h('span', {class: 'visually-hidden'}, spoken));
  const docIds = new Set((claim.citations || []).map((c) => c.document_id));
  const chunkIds = (claim.citations || []).map((c) => c.chunk_id);
  const passages = new Set((claim.citations || []).map(passageKey));
  const light = (on) => {
    for (const span of el.querySelectorAll(`span.claim[data-claim="${index}"]`)) span.classList.toggle('active', on);
    for (const li of references?.querySelectorAll('li[data-doc]') || []) {
      li.classList.toggle('highlight', on && docIds.has(li.dataset.doc));
    }
    for (const link of references?.querySelectorAll('a[data-passage]') || []) {
      link.classList.toggle('cited', on && passages.has(link.dataset.passage));
    }
    for (const id of chunkIds) document.getElementById(`ctx-chunk-${id}`)?.classList.toggle('highlight', on);
  };
  const open = () => claim.citations?.[0] && openSource(claim.citations[0], project);
  for (const span of pieces) {
    span.addEventListener('mouseenter', () => light(true));
    span.addEventListener('mouseleave', () => light(false));
    span.addEventListener('focus', () => light(true));
    span.addEventListener('blur', () => light(false));
    span.addEventListener('click', (e) => { if (!e.target.closest('a')) open(); });
    span.addEventListener('keydown', (e) => { if (e.key === 'Enter') open(); });
  }
}

function markerLink(label, node, {final, docs, claims, project}) {
  const claimIndex = node.parentElement?.closest('span.claim')?.dataset.claim;
  const claim = claimIndex === undefined ? null : claims[Number(claimIndex)];
  const ref = (final.references || []).find((r) => String(r.reference_id) === label);
  let passage = null;
  if (ref) {
    const doc = docs.find((d) => d.document_id === ref.document_id);
    const citation = claim?.citations?.find((c) => c.document_id === ref.document_id);
    const chunk = (final.context?.chunks || []).find((c) => c.reference_id === ref.reference_id);
    passage = citation || doc?.passages[0]
      || (chunk && {document_id: ref.document_id, file_path: ref.file_path, chunk_id: chunk.id});
  } else if (label.length >= 4) {
    const chunk = (final.context?.chunks || []).find((c) => c.id === label || c.id.startsWith(label));
    if (chunk) passage = {document_id: chunk.document_id, file_path: chunk.file_path, chunk_id: chunk.id};
  }
  if (!passage) return null;
  return sourceLink(passage, project, {class: 'marker', title: fileName(passage.file_path, passage.document_id)},
    `[${label}]`);
}

function referenceList(docs, project) {
  if (!docs.length) return h('p', {class: 'muted small references'}, 'No references.');
  return h('section', {class: 'references'}, h('h3', {}, 'References'), h('ol', {class: 'plain'},
    docs.map((doc) => h('li', {dataset: {doc: doc.document_id}},
      h('span', {class: 'ref-id'}, `[${doc.label}] `),
      doc.passages.length
        ? sourceLink(doc.passages[0], project, {class: 'reference', title: doc.file_path || ''}, fileName(doc.file_path, doc.document_id))
        : h('span', {class: 'reference'}, fileName(doc.file_path, doc.document_id)),
      doc.passages.length > 1 ? [h('span', {class: 'muted'}, ' — passages: '),
        doc.passages.map((p, i) => [i ? ', ' : '', sourceLink(p, project, {class: 'chunk-link'}, String(i + 1))])] : null))));
}
