import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failures, formatReport, runChaos } from '../chaos/scenario.ts';
import { kafkaCluster, type KafkaCluster } from '../support/kafka-cluster.ts';

// The short cluster fault suite (the whole one is `make cluster-chaos`): on three Kafka nodes
// (replication factor 3, min.insync.replicas 2) with two processes of the API and of every stage,
// a node is killed with SIGKILL under sustained sends and started again, then one process of each
// stage is killed. Nothing lost, nothing sent twice, every message answered; both API processes
// answered; and the killed processes' partitions went to the other process of their group.
let cluster: KafkaCluster;
beforeAll(async () => {
  cluster = await kafkaCluster();
}, 300_000);
afterAll(async () => {
  await cluster?.release();
}, 120_000);

describe('faults on a three-node cluster with two processes per stage', () => {
  it('lose nothing, send nothing twice, and move partitions to the surviving processes', async () => {
    const report = await runChaos({
      faults: [
        { kind: 'kill-broker', node: 2, downMs: 10_000 },
        { kind: 'kill', services: ['policy', 'delivery', 'instance-events', 'webhooks'], interruptSends: true, untilTakenOver: true },
      ],
      replicas: 2,
      clients: 6,
      pauseMs: 5_000,
      tailMs: 3_000,
      env: { ...cluster.env, LOG_LEVEL: 'info' },
    });
    console.log(formatReport(report));
    expect(failures(report.counts)).toEqual([]);
    expect(report.counts.messages).toBeGreaterThan(50);
    // Half the traffic through each API process (a retry goes to the other one): both answered.
    expect(report.answers_by_api).toHaveLength(2);
    expect(Math.min(...report.answers_by_api)).toBeGreaterThan(0);
    // While policy (slot 0) was dead, its partner held all six partitions of the policy group.
    const policyGroup = report.assignments.filter((a) => a.group.endsWith('.policy'));
    expect(policyGroup.some((a) => a.process === 'policy#1' && a.partitions === 6)).toBe(true);
    expect(policyGroup.some((a) => a.process === 'policy#1' && a.partitions === 3)).toBe(true);
  }, 900_000);
});
