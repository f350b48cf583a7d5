// The build starts from an empty dist/: files deleted from src/ must not linger and ship.
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
