/**
 * How a refresh reads another's published window from its memo (fleetWindows): what is not a window
 * is left out, and a crowding past its end is dropped while the window still counts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readPublishedWindow } from '../../src/activities/book-activities.js';

const NOW = Date.parse('2026-11-27T03:00:00Z');

void describe('a published book window as read by another refresh', () => {
  void it('keeps a fresh crowding, and one from a build that published no end', () => {
    assert.deepEqual(readPublishedWindow({ size: 6, weight: 1, crowding: 1.4, crowdingUntil: NOW + 1 }, NOW), { size: 6, weight: 1, crowding: 1.4 });
    assert.deepEqual(readPublishedWindow({ size: 6, weight: 2, crowding: 1.4 }, NOW), { size: 6, weight: 2, crowding: 1.4 });
  });

  void it("drops a crowding past its end (that book's children stopped finishing) but still counts its window", () => {
    assert.deepEqual(readPublishedWindow({ size: 9, weight: 1, crowding: 2.6, crowdingUntil: NOW - 1 }, NOW), { size: 9, weight: 1 });
  });

  void it('leaves out what is not a window rather than guessing', () => {
    for (const memo of [
      undefined,
      null,
      'window',
      { weight: 1 },
      { size: -1, weight: 1 },
      { size: 3, weight: 0 },
      { size: Number.NaN, weight: 1 },
      { size: 3, weight: '1' },
    ]) {
      assert.equal(readPublishedWindow(memo, NOW), undefined, JSON.stringify(memo));
    }
    assert.deepEqual(
      readPublishedWindow({ size: 3, weight: 1, crowding: 'high', crowdingUntil: 'later' }, NOW),
      { size: 3, weight: 1 },
      'a crowding that is not a number is not one',
    );
  });
});
