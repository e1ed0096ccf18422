// Graph explorer: an entity's neighbourhood (GET /graph) drawn with cytoscape, coloured by type and sized by
// degree; a click selects a node, shows it in the side panel and expands its neighbours. The panel edits,
// renames, merges and deletes (entity_panel.js). Answers that arrive after a project switch are thrown away, so
// neither the drawing nor the panel ever shows the previous project.

import cytoscape from '../vendor/cytoscape/cytoscape.esm.min.js';
import {api, currentProject, setCurrentProject} from './api.js';
import {$, clear, emptyState, errorState, errorText, h, typeColour} from './dom.js';
import {showEntity} from './entity_panel.js';

let root;
let cy = null;
let searchTimer = null;
let lastLabel = null;
let latestLoad = null; // the load() whose answer the drawing waits for

export const graphPage = {
  title: 'Graph',
  init(section) {
    root = section;
    section.append(
      h('h1', {id: 'h-graph'}, 'Graph explorer'),
      h('form', {class: 'card toolbar', id: 'graph-form', role: 'search', onsubmit: (e) => { e.preventDefault(); load($('#entity-search', root).value.trim() || '*'); }},
        h('label', {for: 'entity-search'}, 'Entity'),
        h('input', {id: 'entity-search', type: 'search', list: 'entity-options', placeholder: 'name (empty: the best-connected)',
          autocomplete: 'off', oninput: suggest}),
        h('datalist', {id: 'entity-options'}),
        h('label', {for: 'graph-depth'}, 'Depth'),
        h('select', {id: 'graph-depth'}, [1, 2, 3].map((d) => h('option', {value: d, selected: d === 2}, d))),
        h('label', {for: 'graph-max'}, 'Max nodes'),
        h('input', {id: 'graph-max', type: 'number', min: 1, max: 10000, value: '150', size: 5}),
        h('button', {type: 'submit'}, 'Show'),
        h('button', {type: 'button', class: 'secondary', onclick: () => cy?.fit(undefined, 30)}, 'Fit')),
      h('div', {class: 'graph-layout'},
        h('div', {class: 'graph-area card'},
          h('div', {id: 'graph-canvas', 'aria-label': 'Entity graph; use the node list below with the keyboard', role: 'img'}),
          h('div', {id: 'graph-message', class: 'graph-message'}),
          h('div', {class: 'row wrap'},
            h('label', {for: 'node-list'}, 'Nodes shown'),
            h('select', {id: 'node-list', onchange: (e) => e.target.value && select(e.target.value)}),
            h('div', {id: 'legend', class: 'legend', 'aria-label': 'Entity types'}))),
        h('aside', {class: 'card side-panel', id: 'entity-panel', 'aria-labelledby': 'h-entity'},
          emptyState('Search an entity, or click a node to see it here.'))));
  },
  show(params) {
    const entity = params.get('entity');
    const project = params.get('project'); // a link to an entity names its project: show that one
    if (project && project !== currentProject()) setCurrentProject(project);
    if (entity) {
      $('#entity-search', root).value = entity;
      load(entity).then(() => select(entity));
    } else if (!cy) {
      load('*');
    } else {
      cy.resize(); // the window may have changed while the page was hidden
      cy.fit(undefined, 30);
    }
  },
  projectChanged() {
    cy?.destroy();
    cy = null;
    latestLoad = null;
    clear($('#node-list', root));
    clear($('#legend', root));
    clear($('#entity-options', root));
    clear($('#entity-panel', root), emptyState('Search an entity, or click a node to see it here.'));
    if (!root.hidden) load('*');
  },
};

function suggest(event) {
  clearTimeout(searchTimer);
  const q = event.target.value.trim();
  if (!q) return;
  searchTimer = setTimeout(async () => {
    const project = currentProject();
    try {
      const {entities} = await api('entities', {params: {project_id: project, q, limit: 20}});
      if (project !== currentProject()) return;
      clear($('#entity-options', root), entities.map((e) => h('option', {value: e.name}, e.entity_type)));
    } catch {
      // suggestions are optional
    }
  }, 200);
}

async function fetchGraph(project, label, depth) {
  return api('graph', {params: {project_id: project, label, max_depth: depth,
    max_nodes: Number.parseInt($('#graph-max', root).value, 10) || 150}});
}

/** Replace the drawing with the neighbourhood of `label` (`*`: the best-connected entities). */
export async function load(label = lastLabel || '*') {
  lastLabel = label;
  const project = currentProject();
  const mine = {};
  latestLoad = mine;
  const message = $('#graph-message', root);
  clear(message, 'Loading…');
  try {
    const graph = await fetchGraph(project, label, Number.parseInt($('#graph-depth', root).value, 10));
    if (latestLoad !== mine || project !== currentProject()) return;
    draw(graph, true);
    clear(message, graph.nodes.length ? (graph.is_truncated ? 'Truncated: raise "Max nodes" to see more.' : '')
      : emptyState(label === '*' ? 'The graph is empty: process some documents first.' : `No entity named "${label}".`));
  } catch (err) {
    if (latestLoad === mine && project === currentProject()) clear(message, errorState(err, () => load(label)));
  }
}

async function expand(name, project) {
  try {
    const graph = await fetchGraph(project, name, 1);
    if (project === currentProject()) draw(graph, false);
  } catch (err) {
    if (project === currentProject()) clear($('#graph-message', root), `Could not expand ${name}: ${errorText(err)}`);
  }
}

function elementsOf(graph) {
  return [
    ...graph.nodes.map((n) => ({group: 'nodes', data: {id: n.id, label: n.id, type: n.entity_type, degree: n.degree,
      colour: typeColour(n.entity_type)}})),
    ...graph.edges.map((e) => ({group: 'edges', data: {id: `${e.source}\u0000${e.target}`, source: e.source, target: e.target,
      weight: e.weight, label: e.keywords}})),
  ];
}

function draw(graph, replace) {
  if (!cy) cy = createGraph();
  if (replace) cy.elements().remove();
  const fresh = elementsOf(graph).filter((el) => cy.getElementById(el.data.id).empty());
  cy.add(fresh);
  const maxDegree = Math.max(1, ...cy.nodes().map((n) => n.data('degree')));
  cy.nodes().forEach((n) => n.data('size', 18 + 42 * Math.sqrt(n.data('degree') / maxDegree)));
  // Laid out again and fitted whenever nodes arrive, so an expansion never lands outside the view.
  if (fresh.length || replace) cy.layout({name: 'cose', animate: false, fit: true, padding: 30, nodeRepulsion: () => 8000}).run();
  renderNodeList();
  renderLegend();
}

function createGraph() {
  const instance = cytoscape({
    container: $('#graph-canvas', root),
    minZoom: 0.1,
    maxZoom: 4,
    style: [
      {selector: 'node', style: {'background-color': 'data(colour)', label: 'data(label)', width: 'data(size)', height: 'data(size)',
        'font-size': 11, color: '#1f2933', 'text-valign': 'bottom', 'text-margin-y': 3, 'text-wrap': 'ellipsis', 'text-max-width': 120}},
      {selector: 'node:selected', style: {'border-width': 4, 'border-color': '#111827'}},
      {selector: 'edge', style: {width: 'mapData(weight, 0, 10, 1, 5)', 'line-color': '#b8c2cc', 'curve-style': 'bezier'}},
      {selector: 'edge:selected', style: {'line-color': '#2563eb'}},
    ],
  });
  instance.on('tap', 'node', (event) => select(event.target.id()));
  return instance;
}

function renderNodeList() {
  const names = cy.nodes().map((n) => n.id()).sort((a, b) => a.localeCompare(b));
  clear($('#node-list', root), h('option', {value: ''}, `${names.length} node(s): choose one`),
    names.map((name) => h('option', {value: name}, name)));
}

function renderLegend() {
  const types = [...new Set(cy.nodes().map((n) => n.data('type')))].sort();
  clear($('#legend', root), types.map((t) => h('span', {class: 'legend-item'},
    h('span', {class: 'dot', style: `background:${typeColour(t)}`}), t)));
}

/** Select a node: highlight it, open it in the side panel and add its neighbours to the drawing. */
export async function select(name) {
  const project = currentProject();
  if (cy) {
    cy.elements().unselect();
    const node = cy.getElementById(name);
    if (node.nonempty()) node.select();
  }
  await Promise.all([
    showEntity($('#entity-panel', root), name, project, {open: select, changed: onGraphChanged}),
    expand(name, project),
  ]);
}

function onGraphChanged(focus) {
  cy?.elements().remove();
  if (focus) return load(focus).then(() => select(focus));
  clear($('#entity-panel', root), emptyState('Search an entity, or click a node to see it here.'));
  return load('*');
}
