// The console pages' one way to build elements (imported by api.js, counts.js, app.js, books.js and audit.js).
// @ts-check: checked by tsconfig.page.json, tsconfig.page-books.json and tsconfig.page-audit.json (allowJs + checkJs).

/**
 * The properties el() sets on an element of type E: its own (`className`, `textContent`, `value`,
 * ...), `dataset` entries, and `aria-*`, `role` and `for`, which it sets as attributes.
 * @template {HTMLElement} E
 * @typedef {Partial<Omit<E, 'dataset'>> & { dataset?: Record<string, string>, role?: string, for?: string, [aria: `aria-${string}`]: string | undefined }} ElProps
 */

/** A child el() appends: an element, or text; null, undefined and false are skipped. */
/** @typedef {Node | string | false | null | undefined} ElChild */

/**
 * el('p', { className: 'x', textContent: 'y' }, child, 'text')
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {ElProps<HTMLElementTagNameMap[K]> | null} [props]
 * @param {...ElChild} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, props, ...children) {
  const node = document.createElement(tag);
  /** The element as a bag of properties, to set the ones props names. */
  const properties = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (node));
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('aria-') || key === 'role' || key === 'for') node.setAttribute(key, String(value));
    else properties[key] = value;
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

/**
 * The element with this id: it is in the page's HTML (or the skeleton app.js builds), so a missing
 * one is a bug, reported by its id.
 * @param {string} id
 * @returns {HTMLElement}
 */
export function byId(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page has no element #${id}`);
  return node;
}

/**
 * The first element matching this selector, which the page's HTML has: a missing one is a bug,
 * reported by its selector.
 * @param {string} selector
 * @returns {HTMLElement}
 */
export function required(selector) {
  const node = document.querySelector(selector);
  if (!(node instanceof HTMLElement)) throw new Error(`the page has no element ${selector}`);
  return node;
}
