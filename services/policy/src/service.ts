import type { Runtime } from '@gw/runtime';
import { decideSends } from './decide-sends/handler.ts';

/** Starts the policy consumer: customer-events in, policy-decisions out. */
export async function startPolicyService(runtime: Runtime): Promise<void> {
  const consumer = await runtime.kafka.transform({
    groupId: runtime.topics.group('policy'),
    topics: [runtime.topics.name('customerEvents')],
    instanceId: runtime.config.consumerInstanceId,
    transactionalIdPrefix: runtime.topics.group('policy-tx'),
    transform: decideSends(runtime),
  });
  runtime.consumers.push(consumer);
  runtime.watchLag(consumer.groupId, [runtime.topics.name('customerEvents')]);
}
