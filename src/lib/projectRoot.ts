import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The directory holding package.json: files read at run time (openapi/, prisma/migrations/) are
 * found from here, whether the code runs from src/ (tests) or dist/src/ (production).
 */
export function findProjectRoot(start: string = __dirname): string {
  let dir = path.resolve(start);
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`no package.json found above ${start}`);
    dir = parent;
  }
}
