// The projects page's administration: a project's settings (overrides of the service's; an empty field
// inherits), deleting a project (confirmed by its name), the service's health as a card and the model check.

import {api, currentProject, setCurrentProject} from './api.js';
import {badge, clear, errorText, h, toast} from './dom.js';

const NUMBERS = [
  ['chunk_size', 'Chunk size (tokens)', 16, 100000],
  ['chunk_overlap_size', 'Chunk overlap (tokens)', 0, 100000],
  ['max_gleaning', 'Gleaning passes', 0, 5],
];

/** The settings form of project `p` in `box`; `saved()` reloads the list after a change. */
export function editSettings(box, p, saved) {
  const own = p.settings || {};
  const inherited = p.effective_settings;
  const name = h('input', {id: 'edit-name', type: 'text', value: p.name || ''});
  const language = h('input', {id: 'edit-language', type: 'text', value: own.language || '', placeholder: inherited.language});
  const types = h('input', {id: 'edit-entity-types', type: 'text', value: (own.entity_types || []).join(', '),
    placeholder: inherited.entity_types.join(', ')});
  const numbers = NUMBERS.map(([field, , min, max]) => h('input', {id: `edit-${field}`, type: 'number', min, max,
    value: own[field] ?? '', placeholder: String(inherited[field])}));
  const form = h('form', {class: 'card project-edit', 'aria-labelledby': 'h-project-edit', onsubmit: async (e) => {
    e.preventDefault();
    const settings = {};
    if (language.value.trim()) settings.language = language.value.trim();
    const typeList = types.value.split(',').map((t) => t.trim()).filter(Boolean);
    if (typeList.length) settings.entity_types = typeList;
    NUMBERS.forEach(([field], i) => { if (numbers[i].value !== '') settings[field] = Number(numbers[i].value); });
    try {
      await api(`projects/${encodeURIComponent(p.id)}`, {method: 'PATCH', json: {name: name.value.trim() || undefined, settings}});
      toast(`Saved the settings of ${p.id}`);
      clear(box);
      saved();
    } catch (err) {
      toast(`Could not save the settings of ${p.id}: ${errorText(err)}`, 'error');
    }
  }},
  h('h3', {id: 'h-project-edit'}, `Settings of ${p.id}`),
  h('p', {class: 'hint'}, 'An empty field uses the service\'s setting (shown greyed). New settings apply to documents processed from now on.'),
  h('div', {class: 'grid-fields'},
    h('div', {}, h('label', {for: 'edit-name'}, 'Name'), name),
    h('div', {}, h('label', {for: 'edit-language'}, 'Language'), language),
    NUMBERS.map(([field, label], i) => h('div', {}, h('label', {for: `edit-${field}`}, label), numbers[i]))),
  h('label', {for: 'edit-entity-types'}, 'Entity types (comma separated)'), types,
  h('div', {class: 'actions'}, h('button', {type: 'submit', id: 'edit-save'}, 'Save settings'),
    h('button', {type: 'button', class: 'secondary', onclick: () => clear(box)}, 'Close')));
  clear(box, form);
  name.focus();
}

/** Delete project `p` once the user confirms, naming it and what goes with it. */
export async function deleteProject(p, deleted) {
  const what = `${p.counts.documents} document(s), ${p.counts.entities} entities and ${p.counts.relations} relations`;
  const question = p.id === 'default'
    ? `Empty the project "default"? Its ${what} are deleted (the default project itself always exists).`
    : `Delete the project "${p.id}" with its ${what}? This cannot be undone.`;
  if (!confirm(question)) return;
  try {
    await api(`projects/${encodeURIComponent(p.id)}`, {method: 'DELETE'});
    toast(p.id === 'default' ? 'Emptied the project default' : `Deleted the project ${p.id}`);
    if (p.id === currentProject() && p.id !== 'default') setCurrentProject('default');
    window.dispatchEvent(new Event('projects-changed'));
    deleted();
  } catch (err) {
    toast(`Could not delete ${p.id}: ${errorText(err)}`, 'error');
  }
}

/** The /health report for people: one line per part, ok or not. */
export function healthCard(report) {
  const ok = report.status === 'ok';
  const line = (label, good, text) => h('li', {}, badge(good ? 'ok' : 'problem', good ? 'processed' : 'failed'), ` ${label}: `, text);
  const migrations = report.migrations || {};
  return h('div', {class: 'health-card'},
    h('p', {id: 'health-status', class: ok ? 'ok-text' : 'error-text'}, h('strong', {}, ok ? 'The service is ready.' : 'The service is not ready.')),
    h('ul', {class: 'plain small'},
      line('Database', report.database === 'ok', report.database === 'ok' ? 'reachable' : 'cannot be reached'),
      line('Schema', Boolean(migrations.ok), migrations.ok ? 'up to date' : `at ${migrations.current ?? 'nothing'}, expected ${migrations.head}`),
      line('Language model', Boolean(report.llm?.configured), report.llm?.configured ? report.llm.model : 'not configured'),
      line('Embedding model', Boolean(report.embedding?.configured),
        report.embedding?.configured ? `${report.embedding.model} (${report.embedding.dim} dimensions)` : 'not configured')));
}

/** Run the model check (one call of each kind on a built-in text) and show its verdict. */
export async function modelCheck(box, button) {
  button.disabled = true;
  clear(box, h('p', {class: 'muted'}, 'Checking the model: one extraction, keyword, summary and embedding call…'));
  try {
    const {check} = await api('health/llm', {params: {deep: true}});
    const good = check.verdict !== 'not recommended';
    clear(box,
      h('p', {id: 'model-verdict', class: good ? 'ok-text' : 'error-text'}, h('strong', {}, `${check.model}: ${check.verdict}`),
        ` · found ${check.facts_found} of ${check.facts_total} facts`),
      check.reasons.length ? h('ul', {class: 'small'}, check.reasons.map((r) => h('li', {}, r))) : null,
      h('ul', {class: 'plain small'}, check.calls.map((c) => h('li', {}, badge(c.ok ? 'ok' : 'failed', c.ok ? 'processed' : 'failed'),
        ` ${c.call} · ${c.latency_ms} ms`, c.error ? h('span', {class: 'error-text'}, ` · ${c.error}`) : null))));
  } catch (err) {
    clear(box, h('p', {class: 'error-text', role: 'alert'}, err.code === 'admin_key_required'
      ? 'Only a key for every project may run the model check.' : `The model check failed: ${errorText(err)}`));
  } finally {
    button.disabled = false;
  }
}
