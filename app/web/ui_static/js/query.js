// Query playground: the question with its mode, budgets and rerank toggle; the answer streamed from
// POST /query/stream (Server-Sent Events read with fetch); references linked to the cited chunks; the context
// inspector; token usage; the conversation so far (sent back as conversation_history). Each project has its own
// conversation; an answer still arriving after a switch goes to its own project's conversation, not on screen.

import {api, currentProject} from './api.js';
import {$, badge, clear, emptyState, errorText, h, pageLink, typeColour} from './dom.js';

const MODES = ['mix', 'hybrid', 'local', 'global', 'naive', 'bypass'];
const BUDGETS = [
  ['top_k', 'Top k (entities / relations)', 40],
  ['chunk_top_k', 'Chunks kept', 20],
  ['max_entity_tokens', 'Entity tokens', 6000],
  ['max_relation_tokens', 'Relation tokens', 8000],
  ['max_total_tokens', 'Total tokens', 30000],
];

let root;
let conversation = {project: null, turns: []}; // turns: {question, answer, mode, final, usage, error}
let running = null; // the AbortController of the query in progress

export const queryPage = {
  title: 'Query',
  init(section) {
    root = section;
    section.append(
      h('h1', {id: 'h-query'}, 'Query playground'),
      h('div', {class: 'query-layout'},
        h('div', {class: 'query-main'},
          queryForm(),
          h('section', {class: 'card', 'aria-labelledby': 'h-conversation'},
            h('div', {class: 'row'}, h('h2', {id: 'h-conversation'}, 'Conversation'), h('span', {class: 'spacer'}),
              h('button', {type: 'button', class: 'secondary small', id: 'new-conversation', onclick: resetConversation}, 'New conversation')),
            h('div', {id: 'conversation', 'aria-live': 'polite'}))),
        h('section', {class: 'card inspector', 'aria-labelledby': 'h-inspector'},
          h('h2', {id: 'h-inspector'}, 'Context inspector'), h('div', {id: 'inspector'}))));
    restoreConversation();
  },
  show() {},
  projectChanged() {
    running?.abort();
    restoreConversation();
  },
};

// The conversation of each project is kept for the tab's life (session storage), so a reload keeps it.
function historyKey(project) {
  return `lightrag.conversation.${project}`;
}

function saveConversation({project, turns} = conversation) {
  const kept = turns.map(({question, answer, mode, final, error}) => ({question, answer, mode, final, error}));
  try {
    sessionStorage.setItem(historyKey(project), JSON.stringify(kept));
  } catch {
    sessionStorage.removeItem(historyKey(project)); // over the storage quota: keep it in this page only
  }
}

function restoreConversation() {
  const project = currentProject();
  let turns;
  try {
    turns = JSON.parse(sessionStorage.getItem(historyKey(project)) || '[]');
  } catch {
    turns = [];
  }
  conversation = {project, turns};
  renderConversation();
  renderInspector(turns.at(-1)?.final || null);
  clear($('#usage', root));
}

function queryForm() {
  const question = h('textarea', {id: 'question', rows: 3, required: true, placeholder: 'Ask about your documents…',
    onkeydown: (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); ask(); } }});
  return h('form', {class: 'card', id: 'query-form', onsubmit: (e) => { e.preventDefault(); ask(); }},
    h('label', {for: 'question'}, 'Question'), question,
    h('div', {class: 'row wrap'},
      h('label', {for: 'mode'}, 'Mode'),
      h('select', {id: 'mode'}, MODES.map((m) => h('option', {value: m}, m))),
      h('label', {class: 'check'}, h('input', {type: 'checkbox', id: 'rerank', checked: true}), ' Rerank chunks'),
      h('label', {for: 'response-type'}, 'Answer as'),
      h('input', {id: 'response-type', type: 'text', value: 'Multiple Paragraphs', size: 16}),
      h('span', {class: 'spacer'}),
      h('button', {type: 'submit', id: 'ask'}, 'Ask'),
      h('button', {type: 'button', id: 'stop', class: 'secondary', disabled: true, onclick: () => running?.abort()}, 'Stop')),
    h('details', {class: 'budgets'}, h('summary', {}, 'Budgets'),
      h('div', {class: 'grid-fields'}, BUDGETS.map(([name, label, value]) => h('div', {},
        h('label', {for: `budget-${name}`}, label),
        h('input', {id: `budget-${name}`, type: 'number', min: 1, step: 1, value: String(value)}))))),
    h('p', {id: 'usage', class: 'muted', 'aria-live': 'polite'}));
}

function resetConversation() {
  running?.abort();
  conversation.turns.splice(0); // emptied in place: a stopped answer saving its conversation saves it empty
  saveConversation();
  renderConversation();
  renderInspector(null);
  clear($('#usage', root));
}

function requestBody(question, {project, turns}) {
  const body = {
    project_id: project,
    query: question,
    mode: $('#mode', root).value,
    enable_rerank: $('#rerank', root).checked,
    response_type: $('#response-type', root).value.trim() || 'Multiple Paragraphs',
    conversation_history: turns.filter((t) => t.answer && !t.error).flatMap((t) => [
      {role: 'user', content: t.question}, {role: 'assistant', content: t.answer}]),
  };
  for (const [name] of BUDGETS) {
    const value = Number.parseInt($(`#budget-${name}`, root).value, 10);
    if (Number.isFinite(value) && value > 0) body[name] = value;
  }
  return body;
}

async function ask() {
  const input = $('#question', root);
  const question = input.value.trim();
  if (!question) { input.focus(); return; }
  if (running) return;
  const turn = {question, answer: '', mode: $('#mode', root).value, final: null, error: null, streaming: true};
  const asked = conversation; // the project it is asked in, whatever is chosen when the answer ends
  const body = requestBody(question, asked);
  asked.turns.push(turn);
  input.value = '';
  const controller = new AbortController();
  running = controller;
  setBusy(true);
  renderConversation();
  try {
    const response = await api('query/stream', {method: 'POST', json: body, raw: true, signal: controller.signal});
    turn.headerUsage = {input: response.headers.get('X-Token-Input'), output: response.headers.get('X-Token-Output')};
    await readEvents(response, (event) => {
      if (event.type === 'chunk') { turn.answer += event.text; if (asked === conversation) updateAnswer(turn); }
      else if (event.type === 'done') turn.final = event;
      else if (event.type === 'error') turn.error = `${event.detail} (${event.code})`;
    });
  } catch (err) {
    turn.error = err.name === 'AbortError' ? 'Stopped.' : errorText(err);
  } finally {
    turn.streaming = false;
    saveConversation(asked);
    if (running === controller) {
      running = null;
      setBusy(false);
    }
    if (asked === conversation) {
      renderConversation();
      renderInspector(turn.final);
      renderUsage(turn);
    }
  }
}

/** Read a text/event-stream body: every `data:` line is one JSON event. */
async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
      if (data) onEvent(JSON.parse(data));
    }
  }
}

function setBusy(busy) {
  $('#ask', root).disabled = busy;
  $('#stop', root).disabled = !busy;
  $('#ask', root).textContent = busy ? 'Answering…' : 'Ask';
}

function renderUsage(turn) {
  const usage = turn.final?.usage;
  const input = usage?.prompt_tokens ?? turn.headerUsage?.input;
  const output = usage?.completion_tokens ?? turn.headerUsage?.output;
  clear($('#usage', root), input === undefined || input === null ? '' :
    `Token usage of the last question: ${input} in, ${output} out `
    + `(headers at the start of the stream: ${turn.headerUsage?.input ?? '—'} in, ${turn.headerUsage?.output ?? '—'} out).`);
}

// ----- conversation -----

function renderConversation() {
  const box = $('#conversation', root);
  const {project, turns} = conversation;
  if (!turns.length) {
    clear(box, emptyState('Ask a question to start. Follow-up questions send the conversation so far.'));
    return;
  }
  clear(box, turns.map((turn, index) => h('article', {class: 'turn', dataset: {index}},
    h('p', {class: 'question'}, h('strong', {}, 'You '), badge(turn.mode, 'mode'), ' ', turn.question),
    h('div', {class: 'answer', id: `answer-${index}`, 'aria-busy': turn.streaming ? 'true' : 'false'},
      turn.answer || (turn.streaming ? 'Thinking…' : '')),
    turn.error ? h('p', {class: 'error-text', role: 'alert'}, turn.error) : null,
    turn.final ? references(turn.final, project) : null)));
}

function updateAnswer(turn) {
  const el = $(`#answer-${conversation.turns.indexOf(turn)}`, root);
  if (el) el.textContent = turn.answer;
}

function references(final, project) {
  if (!final.references?.length) return h('p', {class: 'muted small'}, 'No references.');
  const chunks = final.context?.chunks || [];
  return h('div', {class: 'references'}, h('h3', {}, 'References'), h('ol', {class: 'plain'},
    final.references.map((ref) => {
      const cited = chunks.filter((c) => c.reference_id === ref.reference_id);
      return h('li', {},
        h('span', {class: 'ref-id'}, `[${ref.reference_id}] `),
        h('a', {class: 'reference', href: pageLink('documents', project, {doc: ref.document_id})}, ref.file_path || ref.document_id),
        cited.length ? h('span', {class: 'muted'}, ' — chunks: ') : null,
        cited.map((c, i) => [i ? ', ' : '', h('a', {class: 'chunk-link', title: c.id,
          href: pageLink('documents', project, {doc: c.document_id, chunk: c.id})}, `chunk ${i + 1}`)]));
    })));
}

// ----- context inspector -----

function renderInspector(final) {
  const box = $('#inspector', root);
  if (!final) {
    clear(box, emptyState('The entities, relations and chunks the last answer was built from appear here.'));
    return;
  }
  const {entities, relations, chunks} = final.context;
  const kw = final.keywords || {};
  clear(box,
    h('p', {class: 'small'}, h('strong', {}, 'Keywords: '),
      [...(kw.high_level || []), ...(kw.low_level || [])].join(', ') || '—'),
    h('details', {open: true}, h('summary', {}, `Entities (${entities.length})`),
      entities.length ? h('ul', {class: 'plain'}, entities.map((e) => h('li', {},
        h('span', {class: 'dot', style: `background:${typeColour(e.type)}`}),
        h('a', {href: pageLink('graph', conversation.project, {entity: e.name})}, e.name),
        h('span', {class: 'muted'}, ` ${e.type} · degree ${e.degree}`),
        h('div', {class: 'small'}, e.description)))) : h('p', {class: 'muted'}, 'None.')),
    h('details', {}, h('summary', {}, `Relations (${relations.length})`),
      relations.length ? h('ul', {class: 'plain'}, relations.map((r) => h('li', {},
        h('strong', {}, `${r.source} → ${r.target}`), h('span', {class: 'muted'}, ` weight ${r.weight} · ${r.keywords}`),
        h('div', {class: 'small'}, r.description)))) : h('p', {class: 'muted'}, 'None.')),
    h('details', {}, h('summary', {}, `Chunks (${chunks.length})`),
      chunks.length ? h('ol', {class: 'plain'}, chunks.map((c) => h('li', {id: `ctx-chunk-${c.id}`},
        h('div', {class: 'muted small'}, `[${c.reference_id || '–'}] ${c.file_path || c.document_id} · via ${c.source}`,
          c.rerank_score !== null && c.rerank_score !== undefined ? ` · rerank ${c.rerank_score.toFixed(3)}` : '',
          ` · ${c.content.length} chars`),
        h('pre', {}, c.content)))) : h('p', {class: 'muted'}, 'None.')));
}
