// The console's files, compressed once at build time: the gateway sends `.br` or `.gz` to a browser
// that takes it (@fastify/static's preCompressed) instead of compressing on every request.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = new URL('../dist/web', import.meta.url).pathname;
const COMPRESSIBLE = /\.(js|css|html|svg|json)$/;

function* files(directory) {
  for (const name of readdirSync(directory)) {
    const path = join(directory, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (COMPRESSIBLE.test(name)) yield path;
  }
}

let javascriptGzipBytes = 0;
for (const path of files(root)) {
  const content = readFileSync(path);
  const gzip = gzipSync(content, { level: 9 });
  writeFileSync(`${path}.gz`, gzip);
  writeFileSync(`${path}.br`, brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  if (path.endsWith('.js')) javascriptGzipBytes += gzip.length;
}
console.log(`console: ${(javascriptGzipBytes / 1024).toFixed(1)} KB of JavaScript gzipped (budget 300 KB)`);
