// The console pages' one way to call the console's JSON API (loaded before app.js and books.js):
// same-origin credentials, never cached, and an ApiError carrying the status and the answer's body.
'use strict';

class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

// eslint-disable-next-line no-unused-vars -- used by app.js and books.js
async function api(path, init) {
  const response = await fetch(path, {
    credentials: 'same-origin',
    cache: 'no-store',
    ...init,
    headers: { accept: 'application/json', ...(init && init.body ? { 'content-type': 'application/json' } : {}) },
  });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}
