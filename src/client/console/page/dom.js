// The console pages' one way to build elements (loaded before app.js and books.js).
'use strict';

/** el('p', { className: 'x', textContent: 'y' }, child, 'text') */
// eslint-disable-next-line no-unused-vars -- used by app.js and books.js
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('aria-') || key === 'role' || key === 'for') node.setAttribute(key, String(value));
    else node[key] = value;
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}
