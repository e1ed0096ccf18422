// The documents page's pipeline card: counts by status, progress that never passes failures off as success,
// and the files being worked on (by name, not id).

import {badge, clear, h} from './dom.js';

/** Show pipeline status `p` in `box`; `documents` (the listed ones) name in-flight ids the service gave no name. */
export function renderPipeline(box, p, documents) {
  const c = p.by_status;
  const failed = c.failed + (c.cancelled || 0);
  const total = c.pending + c.processing + c.processed + failed;
  const done = c.processed + failed;
  // Failures are never counted as success: "16 done, 3 failed" in the danger colour, and the bar with them.
  const label = [`${c.processed} done`];
  if (c.failed) label.push(`${c.failed} failed`);
  if (c.cancelled) label.push(`${c.cancelled} cancelled`);
  const queued = c.pending + c.processing;
  clear(box,
    h('div', {class: 'stats'},
      ...['pending', 'processing', 'processed', 'failed', 'cancelled'].filter((s) => s in c).map((s) => h('div', {class: 'stat'},
        h('span', {class: 'stat-value'}, c[s]), badge(s)))),
    h('label', {for: 'pipeline-progress', id: 'pipeline-label', class: failed ? 'error-text' : null},
      `${label.join(', ')}${queued ? `, ${queued} to go` : ''} (of ${total})`),
    h('progress', {id: 'pipeline-progress', class: failed ? 'with-failures' : null, max: total || 1, value: done}),
    h('p', {class: 'muted'}, `Queue: ${p.queue_depth} in this project, ${p.global_queue_depth} in all.`),
    p.in_flight.length ? h('p', {class: 'muted', id: 'pipeline-working'}, 'Working on: ',
      p.in_flight.map((f, i) => [i ? ', ' : '', h('span', {title: f.id}, f.file_path || nameOf(f.id, documents)),
        f.stage ? h('span', {class: 'small'}, ` (${f.stage})`) : null])) : null);
}

/** A document's file name when the list has it, else its id. */
function nameOf(id, documents) {
  const doc = documents.find((d) => d.id === id);
  return doc?.file_path || id;
}
