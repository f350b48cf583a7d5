import { describe, expect, it } from 'vitest';
import { isDatabaseOutage } from './outage.js';

const coded = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDatabaseOutage', () => {
  it('knows a database that is away, locked, full or slow', () => {
    expect(isDatabaseOutage(coded('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'))).toBe(true);
    expect(isDatabaseOutage(new AggregateError([coded('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')], ''))).toBe(true);
    expect(isDatabaseOutage(coded('terminating connection due to administrator command', '57P01'))).toBe(true);
    expect(isDatabaseOutage(coded('canceling statement due to statement timeout', '57014'))).toBe(true);
    expect(isDatabaseOutage(new Error('Query read timeout'))).toBe(true);
    expect(isDatabaseOutage(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseOutage(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isDatabaseOutage(coded('database is locked', 'SQLITE_BUSY'))).toBe(true);
    expect(isDatabaseOutage(coded('database or disk is full', 'SQLITE_FULL'))).toBe(true);
    expect(isDatabaseOutage(new Error('wrapped', { cause: coded('x', 'ECONNRESET') }))).toBe(true);
  });

  it('leaves bugs and refusals of the data alone', () => {
    expect(isDatabaseOutage(new TypeError('cannot read properties of undefined'))).toBe(false);
    expect(isDatabaseOutage(coded('duplicate key value violates unique constraint', '23505'))).toBe(false);
    expect(isDatabaseOutage(coded('UNIQUE constraint failed: teams.id', 'SQLITE_CONSTRAINT_PRIMARYKEY'))).toBe(false);
    expect(isDatabaseOutage(coded('syntax error', '42601'))).toBe(false);
    expect(isDatabaseOutage('a string')).toBe(false);
  });
});
