// Claims on the rendered answer. A claim's start/end are offsets in the answer's Markdown source, but the page
// shows rendered text (no `**`, `#`, `|`): every rendered character is aligned with the source character it came
// from, and a claim wraps the rendered characters whose source lies inside its range. When that does not give the
// claim's words (an answer the renderer rearranged), its text is looked for in the rendered text instead.

const LOOKAHEAD = 120; // markup between two rendered characters (a table's delimiter row, a link's address)
const SKIP = new Set(['CODE', 'PRE', 'A']);

function textNodes(root, skip = new Set()) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => {
      for (let el = node.parentElement; el && el !== root; el = el.parentElement) {
        if (skip.has(el.tagName)) return NodeFilter.FILTER_REJECT;
      }
      return NodeFilter.FILTER_ACCEPT;
    },
  });
  const nodes = [];
  while (walker.nextNode()) nodes.push(walker.currentNode);
  return nodes;
}

/** For each rendered character, the index of its source character (-1: whitespace or not found). */
function align(source, nodes) {
  let at = 0;
  return nodes.map((node) => Array.from({length: node.data.length}, (_, i) => {
    const ch = node.data[i];
    if (/\s/.test(ch)) return -1;
    const found = source.slice(at, at + LOOKAHEAD).indexOf(ch);
    if (found < 0) return -1;
    at += found + 1;
    return at - 1;
  }));
}

/** The service counts offsets in code points, JavaScript strings in UTF-16 units (they differ after an emoji). */
function codeUnitIndex(source) {
  const units = [];
  let at = 0;
  for (const ch of source) { units.push(at); at += ch.length; }
  units.push(at);
  return (point) => units[Math.min(Math.max(point, 0), units.length - 1)];
}

const comparable = (text) => text.replace(/\[\^?[\w-]{1,40}\]/g, '').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/** The [node, from, to] pieces of rendered text whose source lies in [start, end); a space between two such
 * characters belongs to the claim too (spaces are not aligned). */
function piecesByOffsets(nodes, map, start, end) {
  const inside = map.map((srcs) => srcs.map((src) => (src < 0 ? null : src >= start && src < end)));
  let previous = false;
  const open = []; // unaligned characters waiting for the next aligned one
  inside.forEach((flags) => flags.forEach((flag, i) => {
    if (flag === null) { open.push([flags, i]); return; }
    for (const [list, k] of open.splice(0)) list[k] = previous && flag;
    previous = flag;
  }));
  for (const [list, k] of open) list[k] = false;
  const pieces = [];
  nodes.forEach((node, n) => {
    const from = inside[n].indexOf(true);
    if (from >= 0) pieces.push([node, from, inside[n].lastIndexOf(true) + 1]);
  });
  return pieces;
}

/** The pieces of rendered text spelling `text` (letters and digits compared), searched from `after` on. */
function piecesByText(nodes, text, after) {
  const wanted = comparable(text);
  if (!wanted) return [];
  const chars = []; // [node index, offset] of each comparable rendered character
  let flat = '';
  nodes.forEach((node, n) => {
    const data = node.data.replace(/\[\^?[\w-]{1,40}\]/g, (m) => ' '.repeat(m.length)); // markers do not count
    for (let i = 0; i < data.length; i++) {
      const c = comparable(data[i]);
      if (c) { flat += c; chars.push([n, i]); }
    }
  });
  let at = flat.indexOf(wanted, after.flat);
  if (at < 0) at = flat.indexOf(wanted);
  if (at < 0) return [];
  const last = at + wanted.length - 1;
  after.flat = last + 1;
  const pieces = new Map();
  for (let k = at; k <= last; k++) {
    const [n, i] = chars[k];
    const piece = pieces.get(n) || [nodes[n], i, i + 1];
    piece[2] = i + 1;
    pieces.set(n, piece);
  }
  const end = [...pieces.values()].at(-1); // the sentence's closing punctuation, not compared above
  while (end[2] < end[0].data.length && /[.!?;:,)\]"'”’]/.test(end[0].data[end[2]])) end[2]++;
  return [...pieces.values()];
}

/**
 * Wrap each claim's rendered text in `<span class="claim">` (one or more per claim, data-claim = its index).
 * Returns the spans of each claim (an empty list for a claim not found on the page).
 */
export function wrapClaims(root, source, claims) {
  const unit = codeUnitIndex(source);
  const nodes = textNodes(root, new Set(['CODE', 'PRE']));
  const map = align(source, nodes);
  const after = {flat: 0};
  const planned = claims.map((claim) => {
    const offsets = Number.isInteger(claim.start) && Number.isInteger(claim.end);
    const [start, end] = offsets ? [unit(claim.start), unit(claim.end)] : [0, 0];
    const text = claim.text || source.slice(start, end);
    let pieces = offsets ? piecesByOffsets(nodes, map, start, end) : [];
    const shown = pieces.map(([node, from, to]) => node.data.slice(from, to)).join('');
    if (pieces.length && comparable(shown) === comparable(text)) return pieces;
    const found = piecesByText(nodes, text, after);
    return found.length ? found : pieces;
  });
  // Split text nodes from their ends backwards, so earlier offsets in the same node stay valid.
  const byNode = new Map();
  planned.forEach((pieces, index) => pieces.forEach(([node, from, to]) => {
    byNode.set(node, [...(byNode.get(node) || []), {from, to, index}]);
  }));
  const spans = claims.map(() => []);
  for (const [node, pieces] of byNode) {
    pieces.sort((a, b) => b.from - a.from);
    for (const {from, to, index} of pieces) {
      const middle = node.splitText(from);
      middle.splitText(to - from);
      const span = document.createElement('span');
      span.className = 'claim';
      span.dataset.claim = String(index);
      middle.replaceWith(span);
      span.append(middle);
      spans[index].push(span);
    }
  }
  const inPageOrder = (a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1);
  return spans.map((list) => list.sort(inPageOrder));
}

const REFERENCE_TITLE = /^\s*(references?|sources|citations|bibliography)\s*:?\s*$/i;

/** The model's own "References" section (a heading or a bold line, to the next heading of its level or higher):
 * the page shows one References list, its own, built from the citations. */
export function dropModelReferences(root) {
  for (const start of [...root.children]) {
    if (start.parentNode !== root || !REFERENCE_TITLE.test(start.textContent)) continue;
    const level = /^H[1-6]$/.test(start.tagName) ? Number(start.tagName[1]) : 7;
    if (level === 7 && !(start.tagName === 'P' && start.querySelector('strong, em'))) continue;
    let next = start.nextElementSibling;
    start.remove();
    while (next && !(/^H[1-6]$/.test(next.tagName) && Number(next.tagName[1]) <= level)) {
      const following = next.nextElementSibling;
      next.remove();
      next = following;
    }
  }
}

const MARKER = /\[\^?([\w-]{1,40}(?:\s*,\s*[\w-]{1,40})*)\](?!\()/g;

/** Inline markers ([1], [^2], [1, 3]) become links made by `linkFor(label, markerNode)` (null: left as text). */
export function linkMarkers(root, linkFor) {
  for (const node of textNodes(root, SKIP)) {
    const text = node.data;
    const parts = [];
    let last = 0;
    for (const match of text.matchAll(MARKER)) {
      const links = match[1].split(',').map((label) => linkFor(label.trim(), node));
      if (links.every((link) => !link)) continue;
      parts.push(text.slice(last, match.index));
      links.forEach((link, i) => parts.push(link || `[${match[1].split(',')[i].trim()}]`));
      last = match.index + match[0].length;
    }
    if (!parts.length) continue;
    parts.push(text.slice(last));
    node.replaceWith(...parts.filter((part) => part !== ''));
  }
}
