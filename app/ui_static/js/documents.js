// Documents page: upload (drag and drop, file picker, pasted text), the pipeline, the document list with
// filter, sort, retry/cancel/delete (one or many), and a document's chunks.

import {api, availableOperations, currentProject} from './api.js';
import {$, badge, clear, emptyState, errorState, errorText, formatBytes, formatDate, formatSize, h, toast} from './dom.js';

const BUSY = new Set(['pending', 'processing']);
const RETRYABLE = new Set(['failed', 'cancelled']);
const BATCH = 100; // ids per batch-delete request
const SORTS = {
  updated: (a, b) => b.updated_at.localeCompare(a.updated_at),
  created: (a, b) => b.created_at.localeCompare(a.created_at),
  name: (a, b) => displayName(a).localeCompare(displayName(b)),
  status: (a, b) => a.status.localeCompare(b.status) || displayName(a).localeCompare(displayName(b)),
  size: (a, b) => b.content_length - a.content_length,
};

let root;
let documents = [];
let counts = {};
let selected = new Set();
let timer = null;
let loading = false;
let ops = new Set();
const view = {status: '', text: '', sort: 'updated'};

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
    refresh();
    if (params.get('doc')) openChunks(params.get('doc'), params.get('chunk'));
  },
  hide() {
    clearTimeout(timer);
    timer = null;
  },
  projectChanged() {
    selected = new Set();
    justAdded = [];
    clear($('#upload-result', root));
    $('#doc-chunks', root).hidden = true;
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
  const text = h('textarea', {id: 'paste-text', rows: 4, placeholder: 'Paste text to ingest…'});
  const name = h('input', {id: 'paste-name', type: 'text', placeholder: 'notes.md (optional)'});
  return h('section', {class: 'card', 'aria-labelledby': 'h-upload'},
    h('h2', {id: 'h-upload'}, 'Add documents'),
    h('label', {for: 'file-input', class: 'visually-hidden'}, 'Files to upload'), input, zone,
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
  form.append('project_id', currentProject());
  const total = files.reduce((sum, f) => sum + f.size, 0);
  const result = clear($('#upload-result', root), h('p', {}, `Uploading ${files.length} file(s), ${formatBytes(total)}…`));
  try {
    const {documents: items} = await api('documents/upload', {method: 'POST', body: form});
    showIngestResult(result, items);
  } catch (err) {
    clear(result, h('p', {class: 'error-text', role: 'alert'}, `Upload failed: ${errorText(err)}`));
  }
  refresh();
}

async function ingestText(textArea, nameInput) {
  const text = textArea.value;
  if (!text.trim()) { toast('Paste some text first', 'error'); textArea.focus(); return; }
  const doc = {text, file_path: nameInput.value.trim() || undefined};
  try {
    const {documents: items} = await api('documents', {method: 'POST', json: {project_id: currentProject(), documents: [doc]}});
    showIngestResult($('#upload-result', root), items);
    textArea.value = '';
    nameInput.value = '';
  } catch (err) {
    toast(`Could not add the text: ${errorText(err)}`, 'error');
  }
  refresh();
}

let justAdded = [];

function showIngestResult(box, items) {
  justAdded = items;
  renderJustAdded(box);
}

/** What the last upload did, with each stored document's current status. */
function renderJustAdded(box = $('#upload-result', root)) {
  if (!justAdded.length) return;
  const now = new Map(documents.map((d) => [d.id, d.status]));
  clear(box, h('h3', {}, 'Just added'), h('ul', {class: 'plain'}, justAdded.map((item) => {
    const status = ['rejected', 'duplicate'].includes(item.status) ? item.status : now.get(item.id) || item.status;
    return h('li', {}, badge(status), ' ', item.file_path || item.id || '(text)',
      item.error ? h('span', {class: 'error-text'}, ` — ${item.error}`) : null);
  })));
}

// ----- list -----

function listControls() {
  return h('div', {class: 'toolbar'},
    h('label', {for: 'doc-filter'}, 'Filter'),
    h('input', {id: 'doc-filter', type: 'search', placeholder: 'name or id',
      oninput: (e) => { view.text = e.target.value.toLowerCase(); render(); }}),
    h('label', {for: 'doc-status'}, 'Status'),
    h('select', {id: 'doc-status', onchange: (e) => { view.status = e.target.value; render(); }},
      ['', 'pending', 'processing', 'processed', 'failed', 'cancelled'].map((s) => h('option', {value: s}, s || 'all'))),
    h('label', {for: 'doc-sort'}, 'Sort by'),
    h('select', {id: 'doc-sort', onchange: (e) => { view.sort = e.target.value; render(); }},
      Object.keys(SORTS).map((s) => h('option', {value: s}, s))),
    h('span', {class: 'spacer'}),
    h('button', {type: 'button', id: 'retry-failed', class: 'secondary', hidden: true, onclick: retryAllFailed}, 'Retry all failed'),
    h('button', {type: 'button', id: 'retry-selected', class: 'secondary', onclick: () => bulk('retry')}, 'Retry selected'),
    h('button', {type: 'button', id: 'cancel-selected', class: 'secondary', hidden: true, onclick: () => bulk('cancel')}, 'Cancel selected'),
    h('button', {type: 'button', id: 'delete-selected', class: 'danger', onclick: () => bulk('delete')}, 'Delete selected'),
    h('button', {type: 'button', class: 'secondary', onclick: refresh}, 'Refresh'));
}

async function refresh() {
  clearTimeout(timer);
  if (loading) return;
  loading = true;
  const project = currentProject();
  try {
    const [list, pipeline] = await Promise.all([
      api('documents', {params: {project_id: project, limit: 1000}}),
      api('pipeline', {params: {project_id: project}}),
    ]);
    if (project !== currentProject()) return;
    documents = list.documents;
    counts = list.counts;
    renderPipeline(pipeline);
    render();
  } catch (err) {
    clear($('#doc-table', root), errorState(err, refresh));
    clear($('#pipeline', root), '—');
  } finally {
    loading = false;
    if (!root.hidden) {
      const busy = documents.some((d) => BUSY.has(d.status));
      timer = setTimeout(refresh, busy ? 1500 : 10_000);
    }
  }
}

function renderPipeline(p) {
  const c = p.by_status;
  const total = c.pending + c.processing + c.processed + c.failed + (c.cancelled || 0);
  const done = c.processed + c.failed + (c.cancelled || 0);
  clear($('#pipeline', root),
    h('div', {class: 'stats'},
      ...['pending', 'processing', 'processed', 'failed', 'cancelled'].filter((s) => s in c).map((s) => h('div', {class: 'stat'},
        h('span', {class: 'stat-value'}, c[s]), badge(s)))),
    h('label', {for: 'pipeline-progress'}, `Done ${done} of ${total}`),
    h('progress', {id: 'pipeline-progress', max: total || 1, value: done}),
    h('p', {class: 'muted'}, `Queue: ${p.queue_depth} in this project, ${p.global_queue_depth} in all.`),
    p.in_flight.length ? h('p', {class: 'muted'}, `Working on: ${p.in_flight.map((f) => f.id).join(', ')}`) : null);
}

function visibleDocuments() {
  return documents
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
  $('#cancel-selected', root).hidden = !cancelPath();
  $('#retry-failed', root).hidden = !(ops.has('POST /documents/retry-failed') && counts.failed);
  const table = $('#doc-table', root);
  if (!documents.length) {
    clear(table, emptyState('No documents in this project yet. Drop files above or paste text to start.'));
    return;
  }
  const rows = visibleDocuments();
  selected = new Set([...selected].filter((id) => documents.some((d) => d.id === id)));
  const all = h('input', {type: 'checkbox', 'aria-label': 'Select all shown', checked: rows.length > 0 && rows.every((d) => selected.has(d.id)),
    onchange: (e) => { for (const d of rows) e.target.checked ? selected.add(d.id) : selected.delete(d.id); render(); }});
  clear(table,
    h('p', {class: 'muted'}, `${rows.length} shown of ${documents.length}`,
      ` · ${counts.processed || 0} processed, ${counts.failed || 0} failed`, selected.size ? ` · ${selected.size} selected` : ''),
    rows.length ? h('div', {class: 'table-wrap'}, h('table', {class: 'docs'},
      h('thead', {}, h('tr', {}, h('th', {}, all), ['Name', 'Status', 'Size', 'Chunks', 'Entities', 'Relations', 'Created',
        'Updated', 'Actions'].map((t) => h('th', {scope: 'col', class: t === 'Created' ? 'wide-only' : null}, t)))),
      h('tbody', {}, rows.map(row)))) : emptyState('No document matches the filter.'));
}

function row(doc) {
  const name = displayName(doc);
  return h('tr', {dataset: {id: doc.id, status: doc.status}},
    h('td', {}, h('input', {type: 'checkbox', 'aria-label': `Select ${name}`, checked: selected.has(doc.id),
      onchange: (e) => { e.target.checked ? selected.add(doc.id) : selected.delete(doc.id); render(); }})),
    h('td', {class: 'name'}, h('a', {href: `#/documents?doc=${encodeURIComponent(doc.id)}`}, name),
      doc.file_path && doc.file_path !== doc.id ? h('div', {class: 'muted small doc-id', title: doc.id}, doc.id) : null,
      doc.error ? h('div', {class: 'error-text small'}, doc.error) : null,
      doc.extraction_report?.warning ? h('div', {class: 'warn-text small'}, doc.extraction_report.warning) : null),
    h('td', {}, badge(doc.status), progressOf(doc), doc.attempts > 1 ? h('div', {class: 'muted small'}, `attempt ${doc.attempts}`) : null),
    h('td', {}, formatSize(doc.content_length)),
    h('td', {class: 'num'}, doc.chunks_count),
    h('td', {class: 'num'}, doc.entities_count),
    h('td', {class: 'num'}, doc.relations_count),
    h('td', {class: 'wide-only'}, formatDate(doc.created_at)),
    h('td', {}, formatDate(doc.updated_at)),
    h('td', {class: 'row-actions'},
      RETRYABLE.has(doc.status) ? h('button', {type: 'button', class: 'small secondary', onclick: () => act('retry', [doc.id])}, 'Retry') : null,
      BUSY.has(doc.status) && cancelPath() ? h('button', {type: 'button', class: 'small secondary', onclick: () => act('cancel', [doc.id])}, 'Cancel') : null,
      h('button', {type: 'button', class: 'small danger', 'aria-label': `Delete ${name}`, onclick: () => act('delete', [doc.id])}, 'Delete')));
}

function cancelPath() {
  return ops.has('POST /documents/{document_id}/cancel') ? 'cancel' : null;
}

async function bulk(action) {
  const ids = [...selected];
  if (!ids.length) { toast('Select documents first (the boxes on the left)', 'error'); return; }
  await act(action, ids);
}

async function act(action, ids) {
  if (action === 'delete' && !confirm(`Delete ${ids.length} document(s) and what the graph took from them?`)) return;
  const project = currentProject();
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
    report(action, ids.length, failures);
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
  report(action, ids.length, failures);
}

function report(action, count, failures) {
  const failed = failures.reduce((n, f) => n + f.count, 0);
  if (count > failed) toast(`${action}: ${count - failed} document(s) done`);
  for (const failure of failures) toast(`${action} failed for ${failure.text}`, 'error');
  refresh();
}

async function retryAllFailed() {
  try {
    const {document_ids: ids} = await api('documents/retry-failed', {method: 'POST', json: {project_id: currentProject()}});
    toast(`${ids.length} failed document(s) back in the queue`);
  } catch (err) {
    toast(`Retry failed: ${errorText(err)}`, 'error');
  }
  refresh();
}

// ----- a document's chunks (the targets of query references) -----

async function openChunks(documentId, chunkId) {
  const box = $('#doc-chunks', root);
  box.hidden = false;
  clear(box, h('h2', {id: 'h-chunks'}, `Chunks of ${documentId}`), h('p', {}, 'Loading…'));
  try {
    const {chunks} = await api(`documents/${encodeURIComponent(documentId)}/chunks`, {params: {project_id: currentProject()}});
    clear(box, h('h2', {id: 'h-chunks'}, `Chunks of ${documentId}`),
      h('button', {type: 'button', class: 'secondary small', onclick: () => { box.hidden = true; location.hash = '#/documents'; }}, 'Close'),
      chunks.length ? h('ol', {class: 'chunks'}, chunks.map((c) => h('li', {id: `chunk-${c.id}`, class: c.id === chunkId ? 'highlight' : null},
        h('div', {class: 'muted small'}, `#${c.order} · ${c.tokens} tokens · ${c.id}`), h('pre', {}, c.content))))
        : emptyState('This document has no chunks (yet).'));
    const target = chunkId && document.getElementById(`chunk-${chunkId}`);
    (target || box).scrollIntoView({block: 'start'});
  } catch (err) {
    clear(box, h('h2', {id: 'h-chunks'}, `Chunks of ${documentId}`), errorState(err));
  }
}
