import { KafkaInspector } from '@gw/kafka';
import { createPolicy } from '@gw/policy';
import type { Runtime } from '@gw/runtime';
import { decideSends, POLICY_INPUTS } from './decide-sends/handler.ts';
import { ChainWatch } from './watch/chain-watch.ts';
import { DeadLetterCount } from './watch/dead-letter-count.ts';
import { Periodic } from './watch/periodic.ts';

/**
 * Starts the policy consumer (customer-events in, policy-decisions out), and the watches an SRE
 * alerts on: the policy log's hash chains checked, the open dead letters counted. Returns what
 * stops the watches.
 */
export async function startPolicyService(runtime: Runtime): Promise<() => Promise<void>> {
  // The configuration is checked here, at start: an unusable one stops the service with every problem named.
  const policy = createPolicy();
  runtime.logger.info({ policy_version: policy.version }, 'policy configuration checked');
  await runtime.runStage({
    name: 'policy',
    topic: 'customerEvents',
    accepts: POLICY_INPUTS,
    handle: decideSends(runtime, { ...runtime.config.policy, policy }),
  });
  const { config, metrics, logger } = runtime;
  const chains = new ChainWatch(runtime.pool, metrics.registry, logger, { fullEveryMs: config.policy.chainVerifyFullEveryMs });
  const deadLetters = new DeadLetterCount({ kafka: new KafkaInspector(config.kafkaBrokers, config.topicPrefix), codec: runtime.codec, topics: runtime.topics }, metrics.registry);
  const watches = [
    new Periodic('policy log chain check', config.policy.chainVerifyEveryMs, async () => void (await chains.check()), logger),
    new Periodic('dead letter count', config.policy.deadLettersCountEveryMs, async () => void (await deadLetters.count()), logger),
  ];
  for (const watch of watches) watch.start();
  return async () => {
    await Promise.all(watches.map((watch) => watch.stop()));
  };
}
