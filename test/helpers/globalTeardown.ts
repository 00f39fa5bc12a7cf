import { rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const containers: { stop(): Promise<unknown> }[] = (globalThis as any).__SANDBANK_CONTAINERS__ ?? [];
  await Promise.all(containers.map((c) => c.stop()));
  // Only the folder globalSetup made, whatever DATA_DIR the shell had.
  const dataDir: string | undefined = (globalThis as any).__SANDBANK_DATA_DIR__;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
