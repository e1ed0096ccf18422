// The passage a citation points at, shown beside the conversation: the whole chunk (read through
// GET /documents/{id}/chunks), opened at its start, with the supporting span marked and scrolled into view.

import {api} from './api.js';
import {$, clear, errorState, h, pageLink} from './dom.js';

let box;
let shown = null; // the request the panel waits for

export function sourceViewer() {
  box = h('section', {class: 'card source-viewer', id: 'source-viewer', hidden: true, 'aria-labelledby': 'h-source',
    tabindex: '-1'});
  return box;
}

export function closeSource() {
  shown = null;
  if (box) clear(box).hidden = true;
}

/** The file's name for people: the last part of its path, else a short form of the id. */
export function fileName(filePath, documentId) {
  if (filePath) return filePath.split(/[\\/]/).filter(Boolean).pop() || filePath;
  return documentId ? `document ${documentId.slice(0, 12)}` : 'unknown document';
}

async function loadChunks(project, documentId) {
  const body = await api(`documents/${encodeURIComponent(documentId)}/chunks`, {params: {project_id: project}});
  return body.chunks;
}

/** Show one passage: {document_id, file_path, chunk_id, start?, end?} of `project`. */
export async function openSource(passage, project) {
  const mine = {};
  shown = mine;
  const name = fileName(passage.file_path, passage.document_id);
  const title = h('h2', {id: 'h-source'}, name);
  const close = h('button', {type: 'button', class: 'secondary small', onclick: closeSource}, 'Close');
  const header = h('div', {class: 'row'}, title, h('span', {class: 'spacer'}), close);
  clear(box, header, h('p', {class: 'muted'}, 'Loading the passage…')).hidden = false;
  try {
    const chunks = await loadChunks(project, passage.document_id);
    if (shown !== mine) return;
    const index = chunks.findIndex((c) => c.id === passage.chunk_id);
    const chunk = chunks[index] ?? chunks[0];
    if (!chunk) throw new Error('This document has no chunks any more.');
    const text = h('pre', {class: 'source-text'}, ...marked(chunk.content, index >= 0 ? passage : {}));
    clear(box, header,
      h('p', {class: 'muted small'}, `Chunk ${(index >= 0 ? index : 0) + 1} of ${chunks.length}`,
        passage.file_path && passage.file_path !== name ? ` · ${passage.file_path}` : '', ' · ',
        h('a', {href: pageLink('documents', project, {doc: passage.document_id, chunk: chunk.id})}, 'open in Documents')),
      text);
    land(text);
  } catch (err) {
    if (shown === mine) clear(box, header, errorState(err));
  }
}

/** The chunk's text with the cited span in a <mark> (offsets counted in code points, as the service does). */
function marked(content, {start, end}) {
  const points = Array.from(content);
  if (!Number.isInteger(start) || !Number.isInteger(end) || end <= start || start >= points.length) return [content];
  return [points.slice(0, start).join(''), h('mark', {}, points.slice(start, end).join('')), points.slice(end).join('')];
}

/** The panel comes into view at the chunk's start; its text scrolls only as far as needed to show the mark. */
function land(text) {
  box.scrollIntoView({block: 'nearest'});
  box.focus({preventScroll: true});
  text.scrollTop = 0;
  const mark = $('mark', text);
  if (mark && mark.offsetTop + mark.offsetHeight > text.clientHeight) {
    text.scrollTop = Math.max(0, mark.offsetTop - text.clientHeight / 3);
  }
}
