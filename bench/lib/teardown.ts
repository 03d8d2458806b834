// Everything a bench run creates is registered here and removed at the end, in reverse order,
// whatever happens (error, Ctrl-C, time budget exceeded).
import { Kafka, logLevel } from 'kafkajs';

type Step = { name: string; run: () => Promise<unknown> };

const steps: Step[] = [];
let running: Promise<void> | null = null;

export function defer(name: string, run: () => Promise<unknown>): void {
  steps.push({ name, run });
}

async function withTimeout(step: Step, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
  });
  try {
    await Promise.race([step.run(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs every registered step once (later registrations first); safe to call more than once. */
export function teardown(): Promise<void> {
  running ??= (async () => {
    while (steps.length > 0) {
      const step = steps.pop()!;
      try {
        await withTimeout(step, 45_000);
      } catch (error) {
        console.error(`bench: teardown step "${step.name}" failed: ${String(error)}`);
      }
    }
  })();
  return running;
}

/**
 * Deletes the topics and consumer groups whose names start with one of the prefixes (those of
 * this run only). KafkaClient has no delete operation, so this talks to the admin API directly.
 */
export async function deleteKafkaState(brokers: string[], prefixes: string[]): Promise<{ topics: number; groups: number }> {
  const kafka = new Kafka({ clientId: 'bench-cleanup', brokers, logLevel: logLevel.NOTHING, retry: { retries: 2 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ours = (name: string) => prefixes.some((p) => p.length > 0 && name.startsWith(p));
    const { groups } = await admin.listGroups();
    const groupIds = groups.map((g) => g.groupId).filter(ours);
    if (groupIds.length > 0) await admin.deleteGroups(groupIds).catch(() => undefined);
    const topics = (await admin.listTopics()).filter(ours);
    if (topics.length > 0) await admin.deleteTopics({ topics, timeout: 15_000 });
    return { topics: topics.length, groups: groupIds.length };
  } finally {
    await admin.disconnect();
  }
}

/** Deletes (soft, then permanently) the registry subjects the run's topics registered. */
export async function deleteSubjects(registryUrl: string, prefix: string): Promise<number> {
  const response = await fetch(`${registryUrl}/subjects`, { signal: AbortSignal.timeout(5000) });
  if (!response.ok) return 0;
  const subjects = ((await response.json()) as string[]).filter((s) => s.startsWith(prefix));
  for (const subject of subjects) {
    const url = `${registryUrl}/subjects/${encodeURIComponent(subject)}`;
    await fetch(url, { method: 'DELETE', signal: AbortSignal.timeout(5000) }).catch(() => undefined);
    await fetch(`${url}?permanent=true`, { method: 'DELETE', signal: AbortSignal.timeout(5000) }).catch(() => undefined);
  }
  return subjects.length;
}
