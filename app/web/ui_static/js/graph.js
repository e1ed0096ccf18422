// Graph explorer: an entity's neighbourhood (GET /graph) drawn with cytoscape, coloured by type and sized by
// degree. The first view is the best-connected entities only (a readable few dozen, not every node). A click
// on a node selects it, opens it in the side panel (entity_panel.js) and adds its neighbours around it: only
// the new nodes are placed, every node already drawn stays exactly where it was. A click on an edge opens the
// relation (relation_panel.js), where it can be edited or deleted; "New entity" opens a form in the panel.
// Labels are hidden when zoomed out, where they would only overlap. Answers that arrive after a project switch
// are thrown away, so nothing of the previous project is ever shown.

import cytoscape from '../vendor/cytoscape/cytoscape.esm.min.js';
import {api, currentProject, setCurrentProject} from './api.js';
import {$, clear, emptyState, errorState, errorText, h, typeColour} from './dom.js';
import {entityNameInput, newEntityForm} from './entity_forms.js';
import {showEntity} from './entity_panel.js';
import {showRelation} from './relation_panel.js';

const DEFAULT_NODES = 40; // the first view: the top entities by degree
const FIT_ZOOM = 1.2; // a new drawing is never zoomed in further than this
const LABEL_ZOOM = 0.55; // below this zoom, node labels are hidden
const EXPAND_NODES = 100; // neighbours added by one click at most
const RING = 110; // distance of an expansion's new nodes from the node they hang on (model units)
const EMPTY_PANEL = 'Search an entity, or click a node or an edge to see it here.';

let root;
let cy = null;
let lastLabel = null;
let latestLoad = null; // the load() whose answer the drawing waits for

export const graphPage = {
  title: 'Graph',
  init(section) {
    root = section;
    const [searchBox, options] = entityNameInput(currentProject, {id: 'entity-search', type: 'search',
      placeholder: 'name (empty: the best-connected)'}, 'entity-options');
    section.append(
      h('h1', {id: 'h-graph'}, 'Graph explorer'),
      h('form', {class: 'card toolbar', id: 'graph-form', role: 'search', onsubmit: (e) => { e.preventDefault(); search($('#entity-search', root).value.trim()); }},
        h('label', {for: 'entity-search'}, 'Entity'),
        searchBox, options,
        h('label', {for: 'graph-depth'}, 'Depth'),
        h('select', {id: 'graph-depth'}, [1, 2, 3].map((d) => h('option', {value: d, selected: d === 2}, d))),
        h('label', {for: 'graph-max'}, 'Max nodes'),
        h('input', {id: 'graph-max', type: 'number', min: 1, max: 10000, value: String(DEFAULT_NODES), size: 5}),
        h('button', {type: 'submit'}, 'Show'),
        h('button', {type: 'button', class: 'secondary', id: 'graph-new-entity', onclick: newEntity}, 'New entity')),
      h('div', {class: 'graph-layout'},
        h('div', {class: 'graph-area card', id: 'graph-area'},
          h('div', {class: 'canvas-wrap'},
            h('div', {id: 'graph-canvas', 'aria-label': 'Entity graph; use the node list below with the keyboard', role: 'img'}),
            viewControls()),
          h('div', {id: 'graph-message', class: 'graph-message'}),
          h('div', {class: 'row wrap'},
            h('label', {for: 'node-list'}, 'Nodes shown'),
            h('select', {id: 'node-list', onchange: (e) => e.target.value && select(e.target.value)}),
            h('div', {id: 'legend', class: 'legend', 'aria-label': 'Entity types'}))),
        h('aside', {class: 'card side-panel', id: 'entity-panel', 'aria-label': 'Selected entity or relation'},
          emptyState(EMPTY_PANEL))));
    document.addEventListener('fullscreenchange', () => {
      $('#graph-fullscreen', root).textContent = document.fullscreenElement ? 'Exit full screen' : 'Full screen';
      if (cy) { cy.resize(); cy.fit(undefined, 30); }
    });
  },
  show(params) {
    const entity = params.get('entity');
    const project = params.get('project'); // a link to an entity names its project: show that one
    if (project && project !== currentProject()) setCurrentProject(project);
    if (entity) {
      $('#entity-search', root).value = entity;
      search(entity);
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
    clear($('#entity-panel', root), emptyState(EMPTY_PANEL));
    if (!root.hidden) load('*');
  },
};

function viewControls() {
  const zoomBy = (factor) => {
    if (!cy) return;
    const {width, height} = cy.container().getBoundingClientRect();
    cy.zoom({level: cy.zoom() * factor, renderedPosition: {x: width / 2, y: height / 2}});
  };
  return h('div', {class: 'graph-controls', role: 'toolbar', 'aria-label': 'View'},
    h('button', {type: 'button', class: 'secondary small', id: 'graph-zoom-in', 'aria-label': 'Zoom in', title: 'Zoom in', onclick: () => zoomBy(1.4)}, '+'),
    h('button', {type: 'button', class: 'secondary small', id: 'graph-zoom-out', 'aria-label': 'Zoom out', title: 'Zoom out', onclick: () => zoomBy(1 / 1.4)}, '−'),
    h('button', {type: 'button', class: 'secondary small', id: 'graph-fit', onclick: () => cy?.fit(undefined, 30)}, 'Fit'),
    h('button', {type: 'button', class: 'secondary small', id: 'graph-fullscreen', onclick: toggleFullscreen}, 'Full screen'));
}

function toggleFullscreen() {
  if (document.fullscreenElement) document.exitFullscreen();
  else $('#graph-area', root).requestFullscreen?.();
}

/** The searched entity's neighbourhood, with the entity itself selected, centred and open in the panel. */
async function search(name) {
  if (!name) { await load('*'); return; }
  if (!(await load(name))) return;
  const node = cy?.nodes().filter((n) => n.id().toLowerCase() === name.toLowerCase()).first();
  const found = node?.nonempty() ? node.id() : name; // an alias: the panel finds the entity it names
  if (node?.nonempty()) cy.center(node);
  await select(found, {expand: false});
}

async function fetchGraph(project, label, depth, maxNodes) {
  return api('graph', {params: {project_id: project, label, max_depth: depth, max_nodes: maxNodes}});
}

function maxNodes() {
  return Number.parseInt($('#graph-max', root).value, 10) || DEFAULT_NODES;
}

/** Replace the drawing with the neighbourhood of `label` (`*`: the best-connected entities); true if drawn. */
export async function load(label = lastLabel || '*') {
  lastLabel = label;
  const project = currentProject();
  const mine = {};
  latestLoad = mine;
  const message = $('#graph-message', root);
  clear(message, 'Loading…');
  try {
    const graph = await fetchGraph(project, label, Number.parseInt($('#graph-depth', root).value, 10), maxNodes());
    if (latestLoad !== mine || project !== currentProject()) return false;
    draw(graph);
    clear(message, graph.nodes.length ? (graph.is_truncated ? `The ${graph.nodes.length} best-connected shown: raise "Max nodes" to see more, or click a node to add its neighbours.` : '')
      : emptyState(label === '*' ? 'The graph is empty: process some documents first.' : `No entity named "${label}".`));
    return graph.nodes.length > 0;
  } catch (err) {
    if (latestLoad === mine && project === currentProject()) clear(message, errorState(err, () => load(label)));
    return false;
  }
}

async function expand(name, project) {
  try {
    const graph = await fetchGraph(project, name, 1, EXPAND_NODES);
    if (project === currentProject() && cy) addAround(name, graph);
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

/** A new drawing, laid out whole and fitted. */
function draw(graph) {
  if (!cy) cy = createGraph();
  cy.elements().remove();
  cy.add(elementsOf(graph));
  resize();
  cy.layout({name: 'cose', animate: false, fit: true, padding: 30, randomize: true, nodeRepulsion: () => 9000,
    idealEdgeLength: () => 90}).run();
  if (cy.zoom() > FIT_ZOOM) { // a few nodes fitted would be drawn huge, leaving no room for their neighbours
    cy.zoom(FIT_ZOOM);
    cy.center();
  }
  showLabels();
  renderNodeList();
  renderLegend();
}

/** An expansion: the new nodes go on a ring around `name`; nodes already drawn are locked and never move. */
function addAround(name, graph) {
  const known = (el) => cy.getElementById(el.data.id).nonempty();
  const elements = elementsOf(graph);
  const freshNodes = elements.filter((el) => el.group === 'nodes' && !known(el));
  const freshEdges = elements.filter((el) => el.group === 'edges' && !known(el));
  if (!freshNodes.length && !freshEdges.length) return;
  const centre = cy.getElementById(name);
  const origin = centre.nonempty() ? centre.position() : {x: 0, y: 0};
  const old = cy.nodes();
  old.lock();
  const added = cy.add(freshNodes);
  const radius = RING + 8 * Math.sqrt(added.length);
  added.forEach((node, i) => {
    const angle = (2 * Math.PI * i) / added.length - Math.PI / 2;
    node.position({x: origin.x + radius * Math.cos(angle), y: origin.y + radius * Math.sin(angle)});
  });
  cy.add(freshEdges);
  old.unlock();
  resize();
  showLabels();
  renderNodeList();
  renderLegend();
}

function resize() {
  const maxDegree = Math.max(1, ...cy.nodes().map((n) => n.data('degree')));
  cy.nodes().forEach((n) => n.data('size', 18 + 42 * Math.sqrt(n.data('degree') / maxDegree)));
}

/** Node labels only where they can be read; the canvas says which (data-labels) for tests and styles. */
function showLabels() {
  const hidden = cy.zoom() < LABEL_ZOOM;
  const canvas = $('#graph-canvas', root);
  if (canvas.dataset.labels === (hidden ? 'hidden' : 'shown')) return;
  canvas.dataset.labels = hidden ? 'hidden' : 'shown';
  cy.batch(() => cy.nodes().toggleClass('quiet', hidden));
}

function createGraph() {
  const instance = cytoscape({
    container: $('#graph-canvas', root),
    minZoom: 0.1,
    maxZoom: 4,
    wheelSensitivity: 0.3,
    style: [
      {selector: 'node', style: {'background-color': 'data(colour)', label: 'data(label)', width: 'data(size)', height: 'data(size)',
        'font-size': 11, color: '#1f2933', 'text-valign': 'bottom', 'text-margin-y': 3, 'text-wrap': 'ellipsis', 'text-max-width': 120,
        'text-background-color': '#fbfcfd', 'text-background-opacity': 0.8, 'text-background-padding': 1}},
      {selector: 'node.quiet', style: {label: ''}},
      {selector: 'node:selected', style: {'border-width': 4, 'border-color': '#111827', label: 'data(label)', 'font-weight': 700}},
      {selector: 'edge', style: {width: 'mapData(weight, 0, 10, 1.5, 6)', 'line-color': '#b8c2cc', 'curve-style': 'bezier'}},
      {selector: 'edge:selected', style: {'line-color': '#2563eb', width: 5}},
    ],
  });
  instance.on('tap', 'node', (event) => select(event.target.id()));
  instance.on('tap', 'edge', (event) => openRelation(event.target));
  instance.on('zoom', showLabels);
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

function openRelation(edge) {
  cy.elements().unselect();
  edge.select();
  return showRelation($('#entity-panel', root), edge.data('source'), edge.data('target'), currentProject(),
    {open: (name) => select(name), changed: (saved) => relationChanged(edge, saved)});
}

/** After an edit the edge shows the relation as saved; after a deletion it goes, and its source opens. */
function relationChanged(edge, saved) {
  if (!cy || edge.removed()) return null;
  if (saved) {
    edge.data({weight: saved.weight, label: saved.keywords});
    return openRelation(edge);
  }
  const source = edge.data('source');
  edge.remove();
  return select(source, {expand: false});
}

function newEntity() {
  const project = currentProject();
  cy?.elements().unselect();
  // made after a project switch, the entity is not searched in the project now chosen
  clear($('#entity-panel', root), newEntityForm(project, {changed: (name) => (project === currentProject() ? onGraphChanged(name) : null)}));
  $('#entity-create-name', root).focus();
}

/** Select a node: highlight it, open it in the side panel and (unless told not to) add its neighbours. */
export async function select(name, {expand: grow = true} = {}) {
  const project = currentProject();
  if (cy) {
    cy.elements().unselect();
    const node = cy.getElementById(name);
    if (node.nonempty()) node.select();
  }
  await Promise.all([
    showEntity($('#entity-panel', root), name, project, {open: select, changed: onGraphChanged}),
    grow ? expand(name, project) : null,
  ]);
}

function onGraphChanged(focus) {
  cy?.elements().remove();
  if (focus) return search(focus);
  clear($('#entity-panel', root), emptyState(EMPTY_PANEL));
  return load('*');
}

// For tests and the console: where each drawn node and edge is on screen (relative to the canvas), and what
// is selected.
window.graphView = {
  nodes: () => Object.fromEntries((cy?.nodes() || []).map((n) => [n.id(), n.renderedPosition()])),
  edges: () => (cy?.edges() || []).map((e) => ({source: e.data('source'), target: e.data('target'), at: e.renderedMidpoint()})),
  selected: () => (cy ? cy.$(':selected').map((el) => el.id()) : []),
};
