/**
 * What a gateway process holds, read through its inspector (`node --inspect`): a full garbage
 * collection first, then `process.memoryUsage()`. Resident memory (RSS) also counts garbage not yet
 * collected and pages V8 keeps after collecting, so RSS per stream overstates what a stream holds;
 * the heap and external memory after a collection is what it holds.
 */
export interface HeldMemory {
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  rss: number;
}

export class InspectorMemory {
  private nextId = 1;
  private readonly pending = new Map<number, (result: unknown) => void>();

  /**
   * Keeps the event loop turning while the inspector is in use: twice in full runs an answer had
   * arrived and resolved its promise, yet what awaited it only ran once something else woke the
   * loop (nothing else was scheduled then, and the run stalled for minutes).
   */
  private readonly heartbeat = setInterval(() => undefined, 50);

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      void messageText(event.data).then((text) => {
        const message = JSON.parse(text) as { id?: number; result?: unknown };
        if (message.id === undefined) return;
        this.pending.get(message.id)?.(message.result);
        this.pending.delete(message.id);
      });
    });
  }

  static async connect(port: number): Promise<InspectorMemory> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
    const url = targets[0]?.webSocketDebuggerUrl;
    if (url === undefined) throw new Error(`no inspector target on port ${port}`);
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`inspector at ${url} refused the connection`)), { once: true });
    });
    return new InspectorMemory(socket);
  }

  async held(): Promise<HeldMemory> {
    await this.call('HeapProfiler.collectGarbage');
    await this.call('HeapProfiler.collectGarbage');
    const result = (await this.call('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true })) as {
      result: { value: string };
    };
    return JSON.parse(result.result.value) as HeldMemory;
  }

  close(): void {
    clearInterval(this.heartbeat);
    this.socket.close();
  }

  /** Rejects after 30 s: a run must never wait for ever on a process that did not answer. */
  private call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`the inspector did not answer ${method} within 30 s`));
      }, 30_000);
      this.pending.set(id, (result) => {
        clearTimeout(timer);
        resolve(result);
      });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }
}

/** A frame's text, whether it arrived as a string or as binary data. */
async function messageText(data: unknown): Promise<string> {
  if (typeof data === 'string') return data;
  if (data instanceof Blob) return data.text();
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString('utf8');
  return String(data);
}
