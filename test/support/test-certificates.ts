import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** PEM files of a throwaway CA, a server certificate for 127.0.0.1 and a client certificate, both signed by it. */
export interface TestCertificates {
  directory: string;
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  read(file: string): Buffer;
  remove(): void;
}

/** Why certificates cannot be made here, or null when the openssl command is there. */
export function opensslMissing(): string | null {
  const version = spawnSync('openssl', ['version'], { encoding: 'utf8' });
  return version.error !== undefined || version.status !== 0 ? 'the openssl command is not available to make certificates' : null;
}

/** Made with the openssl command (EC P-256 keys, valid one day). */
export function makeTestCertificates(): TestCertificates {
  const directory = mkdtempSync(join(tmpdir(), 'switchyard-certificates-'));
  const file = (name: string) => join(directory, name);
  const openssl = (...args: string[]): void => {
    const result = spawnSync('openssl', args, { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
  };
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...newKey, '-days', '1', '-subj', '/CN=Switchyard Test CA', '-keyout', file('ca.key'), '-out', file('ca.pem'));
  const signed = (name: string, subject: string, extensions: string): void => {
    openssl('req', ...newKey, '-subj', subject, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`));
    writeFileSync(file(`${name}.ext`), extensions);
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      file(`${name}.ext`),
      '-out',
      file(`${name}.pem`),
    );
  };
  signed('server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  signed('client', '/CN=switchyard-client', 'extendedKeyUsage=clientAuth\n');
  return {
    directory,
    caFile: file('ca.pem'),
    serverCertFile: file('server.pem'),
    serverKeyFile: file('server.key'),
    clientCertFile: file('client.pem'),
    clientKeyFile: file('client.key'),
    read: (path) => readFileSync(path),
    remove: () => rmSync(directory, { recursive: true, force: true }),
  };
}
