// The model's answer as Markdown (headings, lists, tables, code) through the vendored marked, then cleaned by the
// vendored DOMPurify: nothing the model writes can run. HTML in the answer is shown as text, not interpreted.

import {Marked} from '../vendor/marked/marked.esm.js';
import DOMPurify from '../vendor/dompurify/purify.es.js';

const ESCAPES = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'};
const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]);

const markdown = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    html({text}) { return escapeHtml(text); },
  },
});

const PURIFY = {
  FORBID_TAGS: ['style', 'form', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'svg', 'math', 'img',
    'video', 'audio', 'source', 'link', 'meta', 'base'],
  FORBID_ATTR: ['style', 'id', 'name', 'class'],
  RETURN_DOM_FRAGMENT: true,
};

// Links the model wrote leave the page in a new tab and carry nothing of it.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
});

/** The answer's Markdown as a sanitised DocumentFragment; wide tables scroll inside their own box. */
export function renderMarkdown(text) {
  const fragment = DOMPurify.sanitize(markdown.parse(text || ''), PURIFY);
  for (const table of fragment.querySelectorAll('table')) {
    const wrap = document.createElement('div');
    wrap.className = 'table-wrap';
    table.replaceWith(wrap);
    wrap.append(table);
  }
  return fragment;
}
