/**
 * CALLBACK_URLS as the settings read it and as a start is judged against it: prefixes compared as
 * parsed URLs, https unless an address is listed, and every bad entry named.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CallbackUrls, callbackUrlProblem, displayedUrl } from '../../src/callbacks/callback-urls.js';
import { isInternalAddress } from '../../src/callbacks/delivery-request.js';

const allowed = CallbackUrls.parse('lender-a=https://hooks.lender-a.example/loans,lender-a=http://10.0.4.7:8443/,lender-b=https://los.lender-b.example/');

void describe('CALLBACK_URLS', () => {
  void it('reads prefixes per tenant, a tenant listed once per prefix', () => {
    assert.deepEqual(
      [...allowed.entries()],
      [
        ['lender-a', ['https://hooks.lender-a.example/loans', 'http://10.0.4.7:8443/']],
        ['lender-b', ['https://los.lender-b.example/']],
      ],
    );
  });

  void it('names each bad entry', () => {
    const parsed = CallbackUrls.safeParse(
      'a=http://hooks.example/,b=https://user:pw@hooks.example/,c=https://hooks.example/?k=1,d=not a url,e=ftp://1.2.3.4/,nothing',
    );
    assert.equal(parsed.success, false);
    const messages = parsed.error?.issues.map((issue) => issue.message) ?? [];
    assert.deepEqual(messages, [
      '"a=http://hooks.example/": must be https (http only to a listed IP address)',
      '"b=https://user:pw@hooks.example/": must not carry credentials',
      '"c=https://hooks.example/?k=1": must not carry a query or fragment',
      '"d=not a url": must be <customerId>=<url prefix>',
      '"e=ftp://1.2.3.4/": must be https (http only to a listed IP address)',
      '"nothing": must be <customerId>=<url prefix>',
    ]);
  });

  void it("allows a URL under one of its own tenant's prefixes only", () => {
    assert.equal(callbackUrlProblem(allowed, 'lender-a', 'https://hooks.lender-a.example/loans'), undefined);
    assert.equal(callbackUrlProblem(allowed, 'lender-a', 'https://hooks.lender-a.example/loans/done?ref=7'), undefined);
    assert.equal(callbackUrlProblem(allowed, 'lender-a', 'http://10.0.4.7:8443/any'), undefined);
    for (const url of [
      'https://hooks.lender-a.example/loansx',
      'https://hooks.lender-a.example/other',
      'https://hooks.lender-a.example.attacker.net/loans',
      'https://hooks.lender-a.example:444/loans',
      'http://hooks.lender-a.example/loans',
      'http://10.0.4.7:8444/',
      'https://los.lender-b.example/',
    ]) {
      assert.match(callbackUrlProblem(allowed, 'lender-a', url) ?? '', /is not allowed for tenant lender-a: it must begin with one of/, url);
    }
    assert.match(callbackUrlProblem(allowed, 'lender-c', 'https://los.lender-b.example/') ?? '', /tenant lender-c has no callback URLs/);
    assert.equal(callbackUrlProblem(allowed, 'lender-a', 'https://x:y@hooks.lender-a.example/loans'), 'must not carry credentials');
    assert.equal(callbackUrlProblem(allowed, 'lender-a', 'hooks'), 'is not a URL');
  });

  void it('shows a URL without its query', () => {
    assert.equal(displayedUrl('https://hooks.example/a?secret=1'), 'https://hooks.example/a?…');
    assert.equal(displayedUrl('https://hooks.example/a'), 'https://hooks.example/a');
  });
});

void describe('internal addresses', () => {
  void it('are private, loopback, link-local, shared and unspecified ones, IPv4-mapped too', () => {
    for (const address of [
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '127.0.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
    ]) {
      assert.equal(isInternalAddress(address), true, address);
    }
    for (const address of ['8.8.8.8', '172.32.0.1', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(isInternalAddress(address), false, address);
    }
  });
});
