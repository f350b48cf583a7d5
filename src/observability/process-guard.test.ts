import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { guardProcess } from './process-guard.js';

describe('guardProcess', () => {
  it('logs uncaught exceptions and unhandled rejections instead of letting them end the process, until removed', () => {
    const target = new EventEmitter();
    const lines: Array<{ object: Record<string, unknown>; message: string }> = [];
    const remove = guardProcess({ error: (object, message) => lines.push({ object: object as Record<string, unknown>, message }) }, target);
    const thrown = new TypeError('a bug in a close listener');
    // With a listener, Node does not exit on these events; without one it would.
    expect(target.emit('uncaughtException', thrown, 'uncaughtException')).toBe(true);
    expect(target.emit('unhandledRejection', new Error('forgotten promise'))).toBe(true);
    expect(lines.map((line) => line.message)).toEqual([
      'uncaught exception (a bug: please report it with this log line); still serving',
      'unhandled promise rejection (a bug: please report it with this log line); still serving',
    ]);
    expect(lines[0]?.object['err']).toBe(thrown);
    remove();
    expect(target.listenerCount('uncaughtException')).toBe(0);
    expect(target.listenerCount('unhandledRejection')).toBe(0);
  });
});
