// Documents page: upload (drag and drop, file picker, pasted text), the pipeline, the document list with
// filter, sort, retry/cancel/delete (one or many), and a document's chunks.

import {api, availableOperations, currentProject, setCurrentProject} from './api.js';
import {$, badge, clear, emptyState, errorState, errorText, formatBytes, formatDate, formatSize, h, pageLink, toast} from './dom.js';
import {renderPipeline} from './pipeline_card.js';

const BUSY = new Set(['pending', 'processing']);
const RETRYABLE = new Set(['failed', 'cancelled']);
const BATCH = 100; // ids per batch-delete request
const PAGE = 1000; // documents per list request (the service's largest page)
const MAX_LISTED = 50_000; // listed in the table at most
const ROWS = 100; // table rows per page
// Columns left out at 800 px and below, so the name, status and actions fit without sideways scrolling.
const NARROW_HIDDEN = new Set(['Size', 'Entities', 'Relations', 'Created']);
const SORTS = {
  updated: (a, b) => b.updated_at.localeCompare(a.updated_at),
  created: (a, b) => b.created_at.localeCompare(a.created_at),
  name: (a, b) => displayName(a).localeCompare(displayName(b)),
  status: (a, b) => a.status.localeCompare(b.status) || displayName(a).localeCompare(displayName(b)),
  size: (a, b) => b.content_length - a.content_length,
};

let root;
// What the table shows and for which project: every action on it goes to that project, whatever the selector
// says by the time it is pressed. `loaded` is false until the project's first answer arrives.
let listing = {project: null, documents: [], counts: {}, loaded: false};
let selected = new Set();
let timer = null;
let loading = null; // the list request in flight: {project}
let refreshAgain = false; // a refresh asked for while one of the same project was in flight
let chunksShown = null; // the chunks request the panel waits for
let ops = new Set();
const view = {status: '', text: '', sort: 'updated', page: 0};

function displayName(doc) {
  return doc.file_path || doc.id;
}

export const documentsPage = {
  title: 'Documents',
  init(section) {
    root = section;
    section.append(
      h('h1', {id: 'h-documents'}, 'Documents'),
      h('div', {class: 'columns'},
        uploadPanel(),
        h('section', {class: 'card', 'aria-labelledby': 'h-pipeline'},
          h('h2', {id: 'h-pipeline'}, 'Pipeline'), h('div', {id: 'pipeline'}, 'Loading…'))),
      h('section', {class: 'card', 'aria-labelledby': 'h-doclist'},
        h('h2', {id: 'h-doclist'}, 'All documents'), listControls(), h('div', {id: 'doc-table'}, 'Loading…')),
      h('section', {class: 'card', id: 'doc-chunks', hidden: true, 'aria-labelledby': 'h-chunks'}));
    availableOperations().then((found) => { ops = found; render(); });
  },
  show(params) {
    // A link to a document names its project: show that project, so the selector never disagrees with the page.
    const project = params.get('project');
    if (project && project !== currentProject()) setCurrentProject(project); // projectChanged() refreshes
    else refresh();
    if (params.get('doc')) openChunks(params.get('doc'), params.get('chunk'), currentProject());
  },
  hide() {
    clearTimeout(timer);
    timer = null;
  },
  projectChanged() {
    // Nothing of the previous project stays on screen, not even until the new list arrives.
    selected = new Set();
    justAdded = {project: null, items: []};
    listing = {project: currentProject(), documents: [], counts: {}, loaded: false};
    chunksShown = null;
    clear($('#upload-result', root));
    clear($('#doc-chunks', root)).hidden = true;
    clear($('#pipeline', root), 'Loading…');
    render();
    if (!root.hidden) refresh();
  },
};

// ----- upload -----

function uploadPanel() {
  const input = h('input', {type: 'file', id: 'file-input', multiple: true, class: 'visually-hidden',
    accept: '.txt,.md,.pdf,.docx,.html,.htm', onchange: (e) => { upload([...e.target.files]); e.target.value = ''; }});
  const zone = h('div', {class: 'dropzone', id: 'dropzone', tabindex: '0', role: 'button',
    'aria-label': 'Upload files: drop them here or press Enter to choose',
    onclick: () => input.click(),
    onkeydown: (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); input.click(); } },
    ondragover: (e) => { e.preventDefault(); zone.classList.add('over'); },
    ondragleave: () => zone.classList.remove('over'),
    ondrop: (e) => { e.preventDefault(); zone.classList.remove('over'); upload([...e.dataTransfer.files]); }},
  h('strong', {}, 'Drop files here'), h('span', {}, ' or click to choose (.txt .md .pdf .docx .html)'));
  const update = h('label', {class: 'inline'}, h('input', {type: 'checkbox', id: 'upload-update'}),
    ' A file named like a stored document updates it (a new version: only its changed parts are extracted again)');
  const text = h('textarea', {id: 'paste-text', rows: 4, placeholder: 'Paste text to ingest…'});
  const name = h('input', {id: 'paste-name', type: 'text', placeholder: 'notes.md (optional)'});
  return h('section', {class: 'card', 'aria-labelledby': 'h-upload'},
    h('h2', {id: 'h-upload'}, 'Add documents'),
    h('label', {for: 'file-input', class: 'visually-hidden'}, 'Files to upload'), input, zone, update,
    h('div', {id: 'upload-result', 'aria-live': 'polite'}),
    h('form', {class: 'paste', onsubmit: (e) => { e.preventDefault(); ingestText(text, name); }},
      h('label', {for: 'paste-text'}, 'Or paste text'), text,
      h('div', {class: 'row'}, h('label', {for: 'paste-name'}, 'Name'), name,
        h('button', {type: 'submit'}, 'Add text'))));
}

async function upload(files) {
  if (!files.length) return;
  const form = new FormData();
  for (const file of files) form.append('files', file, file.name);
  const project = currentProject();
  form.append('project_id', project);
  if ($('#upload-update', root)?.checked) form.append('update', 'true');
  const total = files.reduce((sum, f) => sum + f.size, 0);
  const result = clear($('#upload-result', root), h('p', {}, `Uploading ${files.length} file(s), ${formatBytes(total)}…`));
  try {
    const {documents: items} = await api('documents/upload', {method: 'POST', body: form});
    showIngestResult(project, items);
  } catch (err) {
    clear(result, h('p', {class: 'error-text', role: 'alert'}, `Upload failed: ${errorText(err)}`));
  }
  refresh();
}

async function ingestText(textArea, nameInput) {
  const text = textArea.value;
  if (!text.trim()) { toast('Paste some text first', 'error'); textArea.focus(); return; }
  const doc = {text, file_path: nameInput.value.trim() || undefined};
  const project = currentProject();
  try {
    const {documents: items} = await api('documents', {method: 'POST', json: {project_id: project, documents: [doc]}});
    showIngestResult(project, items);
    textArea.value = '';
    nameInput.value = '';
  } catch (err) {
    toast(`Could not add the text: ${errorText(err)}`, 'error');
  }
  refresh();
}

let justAdded = {project: null, items: []};

function showIngestResult(project, items) {
  if (project !== currentProject()) {
    toast(`${items.length} document(s) sent to project ${project}`);
    return;
  }
  justAdded = {project, items};
  renderJustAdded();
}

/** What the last upload did, with each stored document's current status. */
function renderJustAdded() {
  if (!justAdded.items.length || justAdded.project !== currentProject()) return;
  const now = new Map(listing.project === justAdded.project ? listing.documents.map((d) => [d.id, d.status]) : []);
  clear($('#upload-result', root), h('h3', {}, `Just added to ${justAdded.project}`), h('ul', {class: 'plain'}, justAdded.items.map((item) => {
    const kept = ['rejected', 'duplicate'].includes(item.status) || item.update_id;  // an update: the row shows its version
    const status = kept ? item.status : now.get(item.id) || item.status;
    return h('li', {}, badge(status), ' ', item.file_path || item.id || '(text)',
      item.update_id ? h('span', {class: 'muted'}, ` — new version queued (${item.update_id})`) : null,
      item.error ? h('span', {class: 'error-text'}, ` — ${item.error}`) : null);
  })));
}

// ----- list -----

function listControls() {
  return h('div', {class: 'toolbar'},
    h('label', {for: 'doc-filter'}, 'Filter'),
    h('input', {id: 'doc-filter', type: 'search', placeholder: 'name or id',
      oninput: (e) => { view.text = e.target.value.toLowerCase(); view.page = 0; render(); }}),
    h('label', {for: 'doc-status'}, 'Status'),
    h('select', {id: 'doc-status', onchange: (e) => { view.status = e.target.value; view.page = 0; render(); }},
      ['', 'pending', 'processing', 'processed', 'failed', 'cancelled'].map((s) => h('option', {value: s}, s || 'all'))),
    h('label', {for: 'doc-sort'}, 'Sort by'),
    h('select', {id: 'doc-sort', onchange: (e) => { view.sort = e.target.value; view.page = 0; render(); }},
      Object.keys(SORTS).map((s) => h('option', {value: s}, s))),
    h('span', {class: 'spacer'}),
    h('button', {type: 'button', id: 'retry-failed', class: 'secondary', hidden: true, onclick: retryAllFailed}, 'Retry all failed'),
    h('button', {type: 'button', id: 'retry-selected', class: 'secondary', onclick: () => bulk('retry')}, 'Retry selected'),
    h('button', {type: 'button', id: 'cancel-selected', class: 'secondary', hidden: true, onclick: () => bulk('cancel')}, 'Cancel selected'),
    h('button', {type: 'button', id: 'delete-selected', class: 'danger', onclick: () => bulk('delete')}, 'Delete selected'),
    h('button', {type: 'button', class: 'secondary', onclick: refresh}, 'Refresh'));
}

/**
 * Load the current project's list. Asked again while a load of the same project is in flight, it loads once
 * more when that one ends (never dropped); a load of another project starts at once, and the answer of the
 * one it replaces is thrown away.
 */
async function refresh() {
  const project = currentProject();
  if (loading?.project === project) {
    refreshAgain = true;
    return;
  }
  clearTimeout(timer);
  timer = null;
  refreshAgain = false;
  const mine = {project};
  loading = mine;
  try {
    const [list, pipeline] = await Promise.all([allDocuments(project), api('pipeline', {params: {project_id: project}})]);
    if (loading !== mine || project !== currentProject()) return;
    listing = {project, documents: list.documents, counts: list.counts, total: list.total, loaded: true};
    renderPipeline($('#pipeline', root), pipeline, listing.documents);
    render();
  } catch (err) {
    if (loading !== mine || project !== currentProject()) return;
    clear($('#doc-table', root), errorState(err, refresh));
    clear($('#pipeline', root), '—');
  } finally {
    if (loading === mine) {
      loading = null;
      if (!root.hidden) loadNext(project);
    }
  }
}

/** Every document of the project: the service answers at most PAGE per request. */
async function allDocuments(project) {
  const first = await api('documents', {params: {project_id: project, limit: PAGE}});
  const documents = [...first.documents];
  while (documents.length < first.total && documents.length < MAX_LISTED) {
    const next = await api('documents', {params: {project_id: project, limit: PAGE, offset: documents.length}});
    if (!next.documents.length) break;
    documents.push(...next.documents);
  }
  return {documents, counts: first.counts, total: first.total};
}

/** After a load: at once when asked meanwhile (or the project changed), else at the next poll. */
function loadNext(project) {
  if (refreshAgain || project !== currentProject()) {
    refresh();
    return;
  }
  const busy = listing.documents.some((d) => BUSY.has(d.status));
  timer = setTimeout(refresh, busy ? 1500 : 10_000);
}

function visibleDocuments() {
  return listing.documents
    .filter((d) => !view.status || d.status === view.status)
    .filter((d) => !view.text || displayName(d).toLowerCase().includes(view.text) || d.id.toLowerCase().includes(view.text))
    .sort(SORTS[view.sort]);
}

function progressOf(doc) {
  // Newer services report a stage and chunk progress; older ones only the status.
  const done = doc.progress?.chunks_done ?? doc.chunks_done;
  const total = doc.progress?.chunks_total ?? doc.chunks_total;
  const parts = [];
  if (doc.stage && BUSY.has(doc.status)) parts.push(h('span', {class: 'muted'}, ` ${doc.stage}`));
  if (doc.stage && doc.status === 'failed') parts.push(h('span', {class: 'muted'}, ` at ${doc.stage}`));
  if (BUSY.has(doc.status) && total) {
    parts.push(h('progress', {max: total, value: done || 0, 'aria-label': `${done || 0} of ${total} chunks`}),
      h('span', {class: 'muted'}, ` ${done || 0}/${total}`));
  }
  return parts;
}

function render() {
  if (!root) return;
  renderJustAdded();
  const {project, documents, counts} = listing;
  $('#cancel-selected', root).hidden = !cancelPath();
  $('#retry-failed', root).hidden = !(ops.has('POST /documents/retry-failed') && counts.failed);
  const table = $('#doc-table', root);
  if (!listing.loaded || project !== currentProject()) {
    clear(table, h('p', {class: 'muted'}, `Loading the documents of ${currentProject()}…`));
    return;
  }
  if (!documents.length) {
    clear(table, emptyState(`No documents in ${project} yet. Drop files above or paste text to start.`));
    return;
  }
  const matching = visibleDocuments();
  const pages = Math.max(1, Math.ceil(matching.length / ROWS));
  view.page = Math.min(view.page, pages - 1);
  const first = view.page * ROWS;
  const rows = matching.slice(first, first + ROWS);
  const ids = new Set(documents.map((d) => d.id));
  selected = new Set([...selected].filter((id) => ids.has(id)));
  const all = h('input', {type: 'checkbox', 'aria-label': 'Select all shown', checked: rows.length > 0 && rows.every((d) => selected.has(d.id)),
    onchange: (e) => { for (const d of rows) e.target.checked ? selected.add(d.id) : selected.delete(d.id); render(); }});
  clear(table,
    h('p', {class: 'muted'}, `Project ${project}: ${matching.length} shown of ${listing.total ?? documents.length}`,
      ` · ${counts.processed || 0} processed, ${counts.failed || 0} failed`, selected.size ? ` · ${selected.size} selected` : ''),
    rows.length ? h('div', {class: 'table-wrap'}, h('table', {class: 'docs'},
      h('thead', {}, h('tr', {}, h('th', {}, all), ['Name', 'Status', 'Size', 'Chunks', 'Entities', 'Relations', 'Created',
        'Updated', 'Actions'].map((t) => h('th', {scope: 'col', class: NARROW_HIDDEN.has(t) ? 'wide-only' : null}, t)))),
      h('tbody', {}, rows.map((doc) => row(doc, project))))) : emptyState('No document matches the filter.'),
    pages > 1 ? pager(first, rows.length, matching.length, pages) : null);
}

function pager(first, count, total, pages) {
  const go = (page) => { view.page = page; render(); $('#doc-range', root)?.scrollIntoView({block: 'nearest'}); };
  return h('div', {class: 'row pager'},
    h('button', {type: 'button', class: 'secondary small', id: 'doc-prev', disabled: view.page === 0, onclick: () => go(view.page - 1)}, '‹ Previous'),
    h('span', {id: 'doc-range'}, `${first + 1}–${first + count} of ${total.toLocaleString()} (page ${view.page + 1} of ${pages})`),
    h('button', {type: 'button', class: 'secondary small', id: 'doc-next', disabled: view.page >= pages - 1, onclick: () => go(view.page + 1)}, 'Next ›'));
}

function row(doc, project) {
  const name = displayName(doc);
  const target = [{id: doc.id, name}];
  return h('tr', {dataset: {id: doc.id, status: doc.status, project}},
    h('td', {}, h('input', {type: 'checkbox', 'aria-label': `Select ${name}`, checked: selected.has(doc.id),
      onchange: (e) => { e.target.checked ? selected.add(doc.id) : selected.delete(doc.id); render(); }})),
    h('td', {class: 'name'}, h('a', {href: pageLink('documents', project, {doc: doc.id})}, name),
      doc.version > 1 ? h('span', {class: 'muted small', title: 'Updated in place: its version'}, ` v${doc.version}`) : null,
      doc.file_path && doc.file_path !== doc.id ? h('div', {class: 'muted small doc-id', title: doc.id}, doc.id) : null,
      doc.error ? h('div', {class: 'error-text small'}, doc.error) : null,
      doc.extraction_report?.warning ? h('div', {class: 'warn-text small'}, doc.extraction_report.warning) : null),
    h('td', {}, badge(doc.status), progressOf(doc), doc.attempts > 1 ? h('div', {class: 'muted small'}, `attempt ${doc.attempts}`) : null),
    h('td', {class: 'wide-only'}, formatSize(doc.content_length)),
    h('td', {class: 'num'}, doc.chunks_count),
    h('td', {class: 'num wide-only'}, doc.entities_count),
    h('td', {class: 'num wide-only'}, doc.relations_count),
    h('td', {class: 'wide-only'}, formatDate(doc.created_at)),
    h('td', {}, formatDate(doc.updated_at)),
    h('td', {class: 'row-actions'},
      RETRYABLE.has(doc.status) ? h('button', {type: 'button', class: 'small secondary', onclick: () => act('retry', target, project)}, 'Retry') : null,
      BUSY.has(doc.status) && cancelPath() ? h('button', {type: 'button', class: 'small secondary', onclick: () => act('cancel', target, project)}, 'Cancel') : null,
      h('button', {type: 'button', class: 'small danger', 'aria-label': `Delete ${name}`, onclick: () => act('delete', target, project)}, 'Delete')));
}



function cancelPath() {
  return ops.has('POST /documents/{document_id}/cancel') ? 'cancel' : null;
}

async function bulk(action) {
  // The selection is of the rows shown, so it belongs to the listed project (it is emptied on a switch).
  const names = new Map(listing.documents.map((d) => [d.id, displayName(d)]));
  const targets = [...selected].map((id) => ({id, name: names.get(id) || id}));
  if (!targets.length) { toast('Select documents first (the boxes on the left)', 'error'); return; }
  await act(action, targets, listing.project);
}

function deleteQuestion(targets, project) {
  const listed = targets.slice(0, 5).map((t) => `"${t.name}"`).join(', ');
  const more = targets.length > 5 ? ` and ${targets.length - 5} more` : '';
  const what = targets.length === 1 ? `the document ${listed}` : `${targets.length} documents (${listed}${more})`;
  return `Delete ${what} from project "${project}", with what the graph took from ${targets.length === 1 ? 'it' : 'them'}?`;
}

/** Run `action` on `targets` ({id, name}) of `project`: the project they were shown for. */
async function act(action, targets, project) {
  if (action === 'delete' && !confirm(deleteQuestion(targets, project))) return;
  const ids = targets.map((t) => t.id);
  const failures = [];
  if (action === 'delete' && ids.length > 1 && ops.has('POST /documents/delete')) {
    // One plan and one rebuild per batch: each touched entity is rebuilt once, not once per document.
    for (let start = 0; start < ids.length; start += BATCH) {
      const batch = ids.slice(start, start + BATCH);
      try {
        await api('documents/delete', {method: 'POST', json: {project_id: project, document_ids: batch}});
        for (const id of batch) selected.delete(id);
      } catch (err) {
        failures.push({count: batch.length, text: `${batch.length} document(s): ${errorText(err)}`});
      }
    }
    report(action, project, ids.length, failures);
    return;
  }
  await Promise.all(ids.map(async (id) => {
    const path = `documents/${encodeURIComponent(id)}`;
    try {
      if (action === 'delete') await api(path, {method: 'DELETE', params: {project_id: project}});
      else await api(`${path}/${action}`, {method: 'POST', json: {project_id: project}});
      selected.delete(id);
    } catch (err) {
      failures.push({count: 1, text: `${id}: ${errorText(err)}`});
    }
  }));
  report(action, project, ids.length, failures);
}

function report(action, project, count, failures) {
  const failed = failures.reduce((n, f) => n + f.count, 0);
  if (count > failed) toast(`${action}: ${count - failed} document(s) of ${project} done`);
  for (const failure of failures) toast(`${action} failed for ${failure.text}`, 'error');
  refresh();
}

async function retryAllFailed() {
  const {project} = listing; // the project whose failed count shows the button
  try {
    const {document_ids: ids} = await api('documents/retry-failed', {method: 'POST', json: {project_id: project}});
    toast(`${ids.length} failed document(s) of ${project} back in the queue`);
  } catch (err) {
    toast(`Retry failed: ${errorText(err)}`, 'error');
  }
  refresh();
}

// ----- a document's chunks (the targets of query references) -----

async function openChunks(documentId, chunkId, project) {
  const box = $('#doc-chunks', root);
  const mine = {};
  chunksShown = mine;
  const title = () => h('h2', {id: 'h-chunks'}, `Chunks of ${documentId} in ${project}`);
  box.hidden = false;
  clear(box, title(), h('p', {}, 'Loading…'));
  try {
    const {chunks} = await api(`documents/${encodeURIComponent(documentId)}/chunks`, {params: {project_id: project}});
    if (chunksShown !== mine) return; // closed, or replaced by another document or project meanwhile
    clear(box, title(),
      h('button', {type: 'button', class: 'secondary small', onclick: () => { chunksShown = null; box.hidden = true; location.hash = '#/documents'; }}, 'Close'),
      chunks.length ? h('ol', {class: 'chunks'}, chunks.map((c) => h('li', {id: `chunk-${c.id}`, class: c.id === chunkId ? 'highlight' : null},
        h('div', {class: 'muted small'}, `#${c.order} · ${c.tokens} tokens · ${c.id}`), h('pre', {}, c.content))))
        : emptyState('This document has no chunks (yet).'));
    const target = chunkId && document.getElementById(`chunk-${chunkId}`);
    (target || box).scrollIntoView({block: 'start'});
  } catch (err) {
    if (chunksShown === mine) clear(box, title(), errorState(err));
  }
}
