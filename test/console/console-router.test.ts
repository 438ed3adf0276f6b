/** The console's route table: what a pattern captures, and what a path matched by another method's route gets. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRouter, type Route } from '../../src/console/router.js';

const reply = () => Promise.resolve({ status: 200, body: {} });
const routes: Route[] = [
  { method: 'GET', permission: 'read', path: '/api/things', handler: reply },
  { method: 'GET', permission: 'read', path: '/api/things/:id', handler: reply },
  { method: 'POST', permission: 'read', path: '/api/things/:id/touch', handler: reply },
  { method: 'POST', permission: 'read', path: '/codec/:action(encode|decode)', handler: reply, cors: () => false },
];
const route = createRouter(routes);

void describe('the console route table', () => {
  void it('captures a segment as sent, still percent-encoded, and picks the route of the method', () => {
    const match = route('GET', '/api/things/a%2Fb');
    assert.equal(match?.route, routes[1]);
    assert.deepEqual(match?.params, { id: 'a%2Fb' });
    assert.equal(route('POST', '/api/things/x/touch')?.route, routes[2]);
  });

  void it('names the methods of the path when the request has another one', () => {
    const match = route('DELETE', '/api/things/x/touch');
    assert.equal(match?.route, undefined);
    assert.deepEqual(match?.allowed, ['POST']);
    assert.deepEqual(match?.params, { id: 'x' });
  });

  void it('matches no empty segment, no trailing slash, and a constrained parameter only as constrained', () => {
    for (const path of ['/api/things/', '/api/things//touch', '/api/things/x/y', '/codec/other', '/API/things'])
      assert.equal(route('GET', path), undefined, path);
    assert.deepEqual(route('POST', '/codec/decode')?.params, { action: 'decode' });
  });

  void it("carries the CORS policy of the path's route whatever the method, for answers before authentication", () => {
    assert.equal(route('OPTIONS', '/codec/encode')?.cors, routes[3]?.cors);
    assert.equal(route('GET', '/api/things')?.cors, undefined);
  });
});
