// Query page as a chat: the turns so far (answers rendered from Markdown, with their claims and one References
// list), the question box at the bottom with mode, budgets and rerank; the answer streamed from POST /query/stream
// (Server-Sent Events read with fetch); beside it the cited passage and the context inspector. Each project has its
// own conversation (sent back as conversation_history); an answer still arriving after a switch goes to its own
// project's conversation, not on screen.

import {api, currentProject} from './api.js';
import {renderTurns, updateStreaming} from './chat_turns.js';
import {inspector, renderInspector} from './inspector.js';
import {closeSource, sourceViewer} from './source_viewer.js';
import {$, clear, errorText, h} from './dom.js';

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
let follow = true; // the conversation keeps its newest text in view unless the reader scrolled up
let frame = 0; // the pending repaint of a streaming answer

export const queryPage = {
  title: 'Query',
  init(section) {
    root = section;
    const turns = h('div', {id: 'conversation', class: 'turns', 'aria-live': 'polite', onscroll: () => {
      follow = turns.scrollTop + turns.clientHeight >= turns.scrollHeight - 40;
    }});
    new ResizeObserver(() => keepInView()).observe(turns); // a narrower window must not hide the newest text
    section.append(
      h('h1', {id: 'h-query', class: 'visually-hidden'}, 'Query'),
      h('div', {class: 'query-layout'},
        h('section', {class: 'card chat', 'aria-labelledby': 'h-conversation'},
          h('div', {class: 'row'}, h('h2', {id: 'h-conversation'}, 'Conversation'), h('span', {class: 'spacer'}),
            h('button', {type: 'button', class: 'secondary small', id: 'new-conversation', onclick: resetConversation}, 'New conversation')),
          turns,
          queryForm()),
        h('div', {class: 'query-side'}, sourceViewer(), inspector())));
    restoreConversation();
  },
  show() {},
  projectChanged() {
    running?.abort();
    closeSource();
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
  follow = true;
  renderConversation();
  showInspector(turns.at(-1)?.final || null);
  clear($('#usage', root));
}

function queryForm() {
  const question = h('textarea', {id: 'question', rows: 2, required: true, 'aria-label': 'Question',
    placeholder: 'Ask about your documents… (Ctrl+Enter to send)',
    onkeydown: (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); ask(); } }});
  return h('form', {class: 'ask-box', id: 'query-form', onsubmit: (e) => { e.preventDefault(); ask(); }},
    h('div', {class: 'ask-row'}, question,
      h('div', {class: 'ask-buttons'},
        h('button', {type: 'submit', id: 'ask'}, 'Ask'),
        h('button', {type: 'button', id: 'stop', class: 'secondary', disabled: true, onclick: () => running?.abort()}, 'Stop'))),
    h('div', {class: 'row wrap small'},
      h('label', {for: 'mode'}, 'Mode'),
      h('select', {id: 'mode'}, MODES.map((m) => h('option', {value: m}, m))),
      h('label', {class: 'check'}, h('input', {type: 'checkbox', id: 'rerank', checked: true}), ' Rerank chunks'),
      h('label', {for: 'response-type'}, 'Answer as'),
      h('input', {id: 'response-type', type: 'text', value: 'Multiple Paragraphs', size: 16}),
      h('details', {class: 'budgets'}, h('summary', {}, 'Budgets'),
        h('div', {class: 'grid-fields'}, BUDGETS.map(([name, label, value]) => h('div', {},
          h('label', {for: `budget-${name}`}, label),
          h('input', {id: `budget-${name}`, type: 'number', min: 1, step: 1, value: String(value)})))))),
    h('p', {id: 'usage', class: 'muted small', 'aria-live': 'polite'}));
}

function resetConversation() {
  running?.abort();
  conversation.turns.splice(0); // emptied in place: a stopped answer saving its conversation saves it empty
  saveConversation();
  closeSource();
  renderConversation();
  showInspector(null);
  clear($('#usage', root));
}

function requestBody(question, project, earlier) {
  const body = {
    project_id: project,
    query: question,
    mode: $('#mode', root).value,
    enable_rerank: $('#rerank', root).checked,
    response_type: $('#response-type', root).value.trim() || 'Multiple Paragraphs',
    conversation_history: earlier.filter((t) => t.answer && !t.error).flatMap((t) => [
      {role: 'user', content: t.question}, {role: 'assistant', content: t.answer}]),
  };
  for (const [name] of BUDGETS) {
    const value = Number.parseInt($(`#budget-${name}`, root).value, 10);
    if (Number.isFinite(value) && value > 0) body[name] = value;
  }
  return body;
}

function ask() {
  const input = $('#question', root);
  const question = input.value.trim();
  if (!question) { input.focus(); return; }
  if (running) return;
  const turn = {question, answer: '', mode: '', final: null, error: null};
  conversation.turns.push(turn);
  input.value = '';
  follow = true;
  answer(turn, conversation);
}

/** Ask a turn's question again with the conversation before it; its new answer replaces the old one in place. */
function retry(turn) {
  if (running || !conversation.turns.includes(turn)) return;
  follow = turn === conversation.turns.at(-1);
  answer(turn, conversation);
}

async function answer(turn, asked) {
  // `asked` is the conversation (so the project) it is asked in, whatever is chosen when the answer ends.
  const body = requestBody(turn.question, asked.project, asked.turns.slice(0, asked.turns.indexOf(turn)));
  Object.assign(turn, {answer: '', mode: body.mode, final: null, error: null, streaming: true});
  const controller = new AbortController();
  running = controller;
  setBusy(true);
  renderConversation();
  try {
    const response = await api('query/stream', {method: 'POST', json: body, raw: true, signal: controller.signal});
    turn.headerUsage = {input: response.headers.get('X-Token-Input'), output: response.headers.get('X-Token-Output')};
    await readEvents(response, (event) => {
      if (event.type === 'chunk') { turn.answer += event.text; if (asked === conversation) repaint(turn); }
      else if (event.type === 'done') {
        turn.final = event;
        // The claims' offsets index the final `response` (the streamed text may still end with the model's own
        // references list): it replaces what was streamed.
        if (typeof event.response === 'string') turn.answer = event.response;
      }
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
      if (turn.final) showInspector(turn.final);
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
  renderTurns(box, conversation, {busy: Boolean(running), onRetry: retry});
  keepInView();
}

/** A streaming answer is repainted at most once a frame (each repaint renders its Markdown again). */
function repaint(turn) {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    const index = conversation.turns.indexOf(turn);
    if (index < 0 || !turn.streaming) return;
    updateStreaming($('#conversation', root), turn, index, conversation.project);
    keepInView();
  });
}

function keepInView() {
  const box = $('#conversation', root);
  if (follow) box.scrollTop = box.scrollHeight;
}

function showInspector(final) {
  renderInspector($('#inspector', root), $('#inspector-counts', root), final, conversation.project);
}
