export default async function globalTeardown(): Promise<void> {
  const containers: { stop(): Promise<unknown> }[] = (globalThis as any).__SANDBANK_CONTAINERS__ ?? [];
  await Promise.all(containers.map((c) => c.stop()));
}
