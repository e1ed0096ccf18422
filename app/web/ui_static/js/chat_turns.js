// The conversation as chat turns: the question, the answer (rendered, with its References), a note when it was
// stopped or failed (the partial answer stays), and per turn Copy and Retry.

import {renderAnswer} from './answer_render.js';
import {badge, emptyState, h, toast} from './dom.js';

export function renderTurns(box, {project, turns}, {busy, onRetry}) {
  if (!turns.length) {
    box.replaceChildren(emptyState('Ask a question to start. Follow-up questions send the conversation so far.'));
    return;
  }
  box.replaceChildren(...turns.map((turn, index) => renderTurn(turn, index, project, {busy, onRetry})));
}

function renderTurn(turn, index, project, {busy, onRetry}) {
  const {el, references} = renderAnswer(turn, project, `answer-${index}`);
  const stopped = turn.error === 'Stopped.';
  return h('article', {class: 'turn', dataset: {index}, 'aria-label': `Question ${index + 1}`},
    h('div', {class: 'question'}, h('span', {class: 'visually-hidden'}, 'You asked: '), turn.question,
      ' ', badge(turn.mode, 'mode')),
    h('div', {class: 'reply'},
      el,
      stopped ? h('p', {class: 'muted small stopped'}, 'Stopped: the answer so far is kept.') : null,
      turn.error && !stopped ? h('p', {class: 'error-text', role: 'alert'}, turn.error) : null,
      references,
      turn.streaming ? null : h('div', {class: 'turn-actions'},
        h('button', {type: 'button', class: 'secondary small copy', disabled: !turn.answer,
          onclick: () => copy(turn.answer)}, 'Copy'),
        h('button', {type: 'button', class: 'secondary small retry', disabled: busy,
          onclick: () => onRetry(turn)}, 'Retry'))));
}

/** Only the answer element of a turn whose text is still arriving. */
export function updateStreaming(box, turn, index, project) {
  const old = box.querySelector(`#answer-${index}`);
  if (old) old.replaceWith(renderAnswer(turn, project, `answer-${index}`).el);
}

async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    toast('Answer copied');
  } catch {
    toast('Could not copy: the browser refused the clipboard', 'error');
  }
}
