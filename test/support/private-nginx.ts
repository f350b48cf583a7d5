import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The nginx binary the reverse-proxy suites run (Debian's `/usr/sbin/nginx`); unset: they are skipped. */
export const nginxBinary = process.env['TEST_NGINX'];

export interface PrivateNginx {
  /** The port it listens on, on 127.0.0.1. */
  port: number;
  /** Everything it wrote to its error log so far. */
  errorLog(): string;
  /**
   * Writes a new `http { }` block and reloads it (SIGHUP, nginx's graceful reload: requests under
   * way finish on the old worker); resolves once the new worker runs.
   */
  reconfigure(httpBlock: (port: number) => string): Promise<void>;
  close(): Promise<void>;
}

/**
 * A private nginx (never the machine's): its own prefix, config, pid, logs and temporary folders
 * in a temporary directory, in the foreground, on a spare port of 127.0.0.1. `httpBlock` is what
 * goes inside `http { }` (upstreams and servers); every `{{port}}` in it becomes the port.
 */
export async function startNginx(httpBlock: (port: number) => string): Promise<PrivateNginx> {
  if (nginxBinary === undefined) throw new Error('TEST_NGINX is not set');
  const binary = nginxBinary;
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-nginx-'));
  const file = (name: string) => join(directory, name);
  for (const folder of ['client-body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(file(folder));
  // As root, nginx's workers would switch to `nobody`, who cannot write the temporary folders here.
  const runAs = process.getuid?.() === 0 ? 'user root;\n' : '';
  let lastError: Error | null = null;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await sparePort();
    const writeConfig = (block: string) =>
      writeFileSync(
        file('nginx.conf'),
        `${runAs}worker_processes 1;
error_log ${file('error.log')} info;
pid ${file('nginx.pid')};
events { worker_connections 256; }
http {
  access_log ${file('access.log')};
  client_body_temp_path ${file('client-body')};
  proxy_temp_path ${file('proxy')};
  fastcgi_temp_path ${file('fastcgi')};
  uwsgi_temp_path ${file('uwsgi')};
  scgi_temp_path ${file('scgi')};
${block}
}
`,
      );
    writeConfig(httpBlock(port));
    const child = spawn(binary, ['-p', `${directory}/`, '-c', file('nginx.conf'), '-e', file('error.log'), '-g', 'daemon off;'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    try {
      await listening(port, child, () => stderr);
    } catch (error) {
      lastError = error as Error;
      // Another process took the spare port between our look and nginx's bind: try another.
      if (/Address already in use/.test(`${stderr}${readLog(file('error.log'))}`)) continue;
      rmSync(directory, { recursive: true, force: true });
      throw error;
    }
    const workersStarted = () => readLog(file('error.log')).split('start worker process ').length;
    return {
      port,
      errorLog: () => readLog(file('error.log')),
      reconfigure: async (block) => {
        const before = workersStarted();
        writeConfig(block(port));
        child.kill('SIGHUP');
        for (let waited = 0; workersStarted() === before; waited += 10) {
          if (waited > 5_000) throw new Error(`nginx did not reload: ${readLog(file('error.log')).slice(-1_000)}`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      },
      close: async () => {
        await stop(child);
        rmSync(directory, { recursive: true, force: true });
      },
    };
  }
  rmSync(directory, { recursive: true, force: true });
  throw lastError ?? new Error('nginx did not start');
}

function readLog(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function sparePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once the port takes connections; rejects if nginx exits first (a config error, a taken port). */
async function listening(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  let exited: string | null = null;
  child.once('exit', (code, signal) => (exited = `nginx exited (${code ?? signal}): ${stderr()}`));
  for (let attempt = 0; attempt < 200; attempt++) {
    if (exited !== null) throw new Error(exited);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  child.kill('SIGKILL');
  throw new Error(`nginx did not listen on ${port}: ${stderr()}`);
}

/** SIGQUIT is nginx's graceful stop; after two seconds it is killed. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGQUIT');
  const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
  await exited;
  clearTimeout(timer);
}
