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
    expect(lines[0]?.object['err']).toEqual({ type: 'TypeError', message: 'a bug in a close listener', stack: thrown.stack });
    remove();
    expect(target.listenerCount('uncaughtException')).toBe(0);
    expect(target.listenerCount('unhandledRejection')).toBe(0);
  });

  it('logs an error as its own words and stack, never the objects hanging off it', () => {
    const target = new EventEmitter();
    const lines: object[] = [];
    guardProcess({ error: (object) => lines.push(object) }, target);
    const error = Object.assign(new Error('Connection terminated unexpectedly'), { client: { processID: 4242, secretKey: 987654321 } });
    target.emit('uncaughtException', error, 'uncaughtException');
    expect(JSON.stringify(lines)).toContain('Connection terminated unexpectedly');
    expect(JSON.stringify(lines)).not.toMatch(/secretKey|processID|987654321/);
  });
});
