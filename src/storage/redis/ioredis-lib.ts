// ioredis, required on first use rather than imported at module load: the embedded default keeps
// its state in SQLite, and then no process needs the client's 1.7 MiB of heap. Classes from here
// are the same objects a static import would give (one CommonJS module cache).
import { createRequire } from 'node:module';

type IoRedis = typeof import('ioredis');
let lib: IoRedis | undefined;

export const ioredis = (): IoRedis => (lib ??= createRequire(import.meta.url)('ioredis') as IoRedis);
