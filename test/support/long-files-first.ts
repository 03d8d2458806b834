import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The int tier runs two files at a time (scripts/test.sh); e2e files run one at a time, where the
 * order changes nothing but which file fails first. Vitest orders files it has no
 * timings for (a clean clone, as CI runs) by size, which puts the cluster fault run (a small file, the
 * longest run) last, where the other worker idles while it finishes. These files start first;
 * the rest follow in vitest's own order. Measured with two workers on the CI machine's shape:
 * cluster-chaos ~130 s, webhook-cli ~79 s, fuzz ~51 s, compliance ~47 s,
 * webhooks ~42 s, gatewayctl ~41 s; every other file under 30 s. A file missing here only runs
 * later; nothing depends on the order but the run's length.
 */
export const LONG_FILES = [
  'test/e2e/cluster-chaos.e2e.test.ts',
  'test/e2e/webhook-cli.e2e.test.ts',
  'test/e2e/fuzz.e2e.test.ts',
  'test/e2e/compliance.e2e.test.ts',
  'test/e2e/webhooks.e2e.test.ts',
  'test/e2e/gatewayctl.e2e.test.ts',
  'test/e2e/redelivery.e2e.test.ts',
  'test/e2e/redelivery-transactions.e2e.test.ts',
  'test/e2e/poison-records.e2e.test.ts',
  'services/gatewayctl/src/limits/limits.int.test.ts',
  'services/gatewayctl/src/compliance/compliance.int.test.ts',
];

const rankOf = (file: string): number => {
  const rank = LONG_FILES.findIndex((long) => file.endsWith(`/${long}`));
  return rank === -1 ? LONG_FILES.length : rank;
};

export default class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    // Array.prototype.sort is stable: files of equal rank keep vitest's order.
    return [...ordered].sort((a, b) => rankOf(a.moduleId) - rankOf(b.moduleId));
  }
}
