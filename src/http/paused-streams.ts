import type { ServerResponse } from 'node:http';
import type { RequestRecord } from '../usage/index.js';

export interface PausedStreamLogger {
  warn(object: object, message: string): void;
}

/** The connection pool a credential draws on: its endpoint's (shared by the credentials to one origin). */
export type ConnectionPoolOf = (credentialId: string) => { readonly name: string; readonly size: number } | null;

/**
 * Bounds what a client that stops reading can hold. While a streamed response waits for its
 * reader, the upstream is paused and keeps its connection from the endpoint's pool; so the wait
 * is limited to `timeoutMs`, and one token may keep at most half of a pool's connections waiting
 * at once (the rest of the pool stays for everyone else).
 */
export class PausedStreams {
  private readonly waiting = new Map<string, number>();

  constructor(
    readonly timeoutMs: number,
    /** The pool a credential's connections come from: its endpoint's (`max_connections`). */
    private readonly poolOf: ConnectionPoolOf,
    private readonly logger: PausedStreamLogger,
  ) {}

  /**
   * Waits until the client reads again (`drain`). Resolves true to go on writing; false when the
   * stream was ended instead: the client left, waited past the bound, or its token already holds
   * its share of the credential with waiting streams. The caller stops the upstream then.
   */
  waitForReader(response: ServerResponse, record: RequestRecord): Promise<boolean> {
    if (response.destroyed) return Promise.resolve(false);
    const pool = this.poolOf(record.upstream ?? '');
    const slot = key(record.tokenId, pool?.name ?? record.upstream);
    const waiting = this.waiting.get(slot) ?? 0;
    if (waiting >= Math.max(1, Math.floor((pool?.size ?? 1) / 2))) {
      this.end(
        response,
        record,
        'paused_stream_limit',
        "a token holds half of this endpoint's connections with streams its clients do not read; ended this one",
      );
      return Promise.resolve(false);
    }
    this.waiting.set(slot, waiting + 1);
    // One listener of each kind per wait, all removed when it ends: a slow reader waits many times.
    return new Promise((resolve) => {
      const finish = (goOn: boolean): void => {
        clearTimeout(timer);
        response.off('drain', onDrain);
        response.off('close', onClose);
        const left = (this.waiting.get(slot) ?? 1) - 1;
        if (left === 0) this.waiting.delete(slot);
        else this.waiting.set(slot, left);
        resolve(goOn);
      };
      const onDrain = (): void => finish(true);
      const onClose = (): void => finish(false);
      const timer = setTimeout(() => {
        finish(false);
        this.end(response, record, 'paused_stream_timeout', `the client read nothing for ${this.timeoutMs} ms; ended the stream`);
      }, this.timeoutMs);
      response.on('drain', onDrain);
      response.on('close', onClose);
    });
  }

  private end(response: ServerResponse, record: RequestRecord, code: string, message: string): void {
    record.errorCode ??= code;
    this.logger.warn({ requestId: record.id, tokenId: record.tokenId, upstream: record.upstream, code }, message);
    // Nothing more can reach this client in time; dropping the connection frees what it holds.
    response.destroy();
  }
}

function key(tokenId: string | null, poolName: string | null): string {
  return `${tokenId ?? ''}\u0000${poolName ?? ''}`;
}
