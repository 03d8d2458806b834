import { GroupCommit } from '@gw/batching';
import type { SendDecided } from '@gw/events';
import type { ManagerBreakers, SendTextResult } from '@gw/evolution';
import type { OutgoingRecord } from '@gw/kafka';
import { maskPhone } from '@gw/observability';
import type { Runtime, StageHandler } from '@gw/runtime';
import { annotateSpan, ATTR_GATEWAY_ERROR_CODE, ATTR_GATEWAY_MESSAGE_ID, ATTR_GATEWAY_OUTCOME, type TraceContext } from '@gw/tracing';
import { claim, recordedOutcomes, recordOutcomes, type AttemptOutcome, type DeliveryOutcome } from './delivery-store.ts';
import type { InstanceDirectory } from './instance-directory.ts';
import { mapConcurrent } from './map-concurrent.ts';
import { outcomeRecords, taskOf, toOutcome, withSendFacts, type SendTask } from './outcomes.ts';
import { typingDelayMs } from './pacing.ts';
import type { InstanceLanes } from './send-lanes.ts';

export interface DispatchDeps {
  runtime: Runtime;
  directory: InstanceDirectory;
  breakers: ManagerBreakers;
  /** One send at a time per instance, with a gap after each (shared by the stage and the resolver of a process). */
  lanes: InstanceLanes;
  clock?: () => number;
}

/** While a batch waits for its paced sends, the group membership is kept alive this often (the session times out after 10 s). */
const HEARTBEAT_EVERY_MS = 3_000;

/**
 * One sendText call for a task through its instance's manager (and its breaker), shown as typing
 * first for a time scaled to its text (pacing.ts; Evolution's `delay`, which the call's timeout
 * waits out). `trace`: the span the call belongs to (the decision's); the call is its client
 * span, and the manager is given its traceparent. The caller holds the instance's turn.
 */
export async function sendThroughManager({ runtime, directory, breakers }: DispatchDeps, task: SendTask, trace?: TraceContext): Promise<SendTextResult> {
  const target = await directory.lookup(task.instanceId);
  if (!target) return { kind: 'failed', reason: 'manager_rejected', detail: 'the instance is no longer configured' };
  const typingMs = typingDelayMs(task.text, task.messageId, task.purpose, runtime.config.delivery.pacing);
  return breakers.send({ ...target, phone: task.phone, text: task.text, typingMs, timeoutMs: runtime.config.delivery.sendTimeoutMs, trace });
}

type Accepted = { decision: SendDecided; trace?: TraceContext };

/** The accepted decisions of a batch, each message once (with its first copy's trace): a batch may hold copies of one decision (a re-emitted batch). */
function acceptedOnce(events: Array<{ event: { payload: SendDecided }; trace?: TraceContext }>): Accepted[] {
  const byMessage = new Map<string, Accepted>();
  for (const { event, trace } of events) {
    const d = event.payload;
    if (d.decision === 'accepted' && d.dispatch && !byMessage.has(d.message_id)) byMessage.set(d.message_id, { decision: d, trace });
  }
  return [...byMessage.values()];
}

/**
 * Sends every accepted decision of a batch through its instance, each message at most once,
 * paced: one send at a time per instance in the instance's turn (send-lanes.ts), the instances
 * of the batch side by side (up to DELIVERY_CONCURRENCY), so a busy instance holds up no other
 * instance of the batch. Each message is claimed in Postgres in its turn, right before it is sent
 * (so the claim's time is the attempt's start, which the resolver goes by), and its outcome
 * recorded right after; concurrent claims and records go out together in one statement each
 * (group commit). The outcomes go out with the batch (in its transaction with the offsets, with
 * KAFKA_EXACTLY_ONCE=transactions). A redelivered decision re-emits the recorded outcome, unless the
 * resolver recorded it (the resolver appends before it records). One
 * whose outcome is open (a send interrupted by a crash, or answered ambiguously) is never sent
 * blindly: the resolver (resolve/resolver.ts) asks the manager.
 */
export function dispatchAccepted(deps: DispatchDeps): StageHandler<'SendDecided'> {
  const { runtime, clock = Date.now } = deps;
  const { codec, pool, logger, metrics, config } = runtime;
  const group = runtime.topics.group('delivery');
  const claims = new GroupCommit<SendTask, boolean>(async (tasks) => {
    const claimed = await claim(pool, tasks);
    return tasks.map((t) => claimed.has(t.messageId));
  });
  const records = new GroupCommit<AttemptOutcome, boolean>(async (attempts) => {
    const recorded = await recordOutcomes(pool, attempts);
    return attempts.map((a) => recorded.has(a.messageId));
  });

  type Step = { kind: 'claimed elsewhere' | 'settled'; task: SendTask; outcome: DeliveryOutcome | null; trace?: TraceContext };

  const sendOne = async ({ decision, trace }: Accepted): Promise<Step> => {
    const task = taskOf(decision, (await deps.directory.displayName(decision.instance_id)) ?? '');
    return deps.lanes.turn(task.instanceId, task.messageId, () => sendInTurn(task, trace));
  };

  const sendInTurn = async (task: SendTask, trace?: TraceContext): Promise<Step> => {
    if (!(await claims.one(task))) return { kind: 'claimed elsewhere', task, outcome: null, trace };
    const result = await sendThroughManager(deps, task, trace);
    metrics.eventsProcessed.inc({ group, topic: 'send-decided', outcome: result.kind });
    annotateSpan(trace, { [ATTR_GATEWAY_MESSAGE_ID]: task.messageId, [ATTR_GATEWAY_OUTCOME]: result.kind, ...('reason' in result ? { [ATTR_GATEWAY_ERROR_CODE]: result.reason } : {}) });
    const fields = { correlation_id: task.commandId, message_id: task.messageId, to: maskPhone(task.phone), result: result.kind, reason: 'reason' in result ? result.reason : undefined };
    if (result.kind === 'accepted') logger.debug(fields, 'delivery attempted');
    else logger.warn(fields, result.kind === 'ambiguous' ? 'delivery outcome unknown; the resolver will ask the manager' : 'delivery not completed');
    const outcome = toOutcome(task, result, clock());
    const recorded = await records.one({ messageId: task.messageId, attempt: task.attempt, outcome, detail: result.kind === 'ambiguous' ? result.detail : null });
    // Not recorded: the resolver took the attempt over meanwhile, and its outcome is the resolver's to tell.
    return { kind: 'settled', task, outcome: recorded ? outcome : null, trace };
  };

  return async (events, batch) => {
    const accepted = acceptedOnce(events);
    if (accepted.length === 0) return [];
    // One worker per instance of the batch, each taking its instance's sends in order.
    const byInstance = new Map<string, Accepted[]>();
    for (const a of accepted) byInstance.set(a.decision.instance_id, [...(byInstance.get(a.decision.instance_id) ?? []), a]);
    const heartbeat = setInterval(() => void batch?.heartbeat?.().catch(() => undefined), HEARTBEAT_EVERY_MS);
    let perInstance: Step[][];
    try {
      perInstance = await mapConcurrent([...byInstance.values()], config.delivery.concurrency, async (sends) => {
        const done: Step[] = [];
        for (const send of sends) done.push(await sendOne(send));
        return done;
      });
    } finally {
      clearInterval(heartbeat);
    }
    const stepOf = new Map(perInstance.flat().map((step) => [step.task.messageId, step]));
    const steps = accepted.map((a) => stepOf.get(a.decision.message_id)!);
    const outputs: OutgoingRecord[] = [];
    const redelivered = steps.flatMap((s) => (s.kind === 'claimed elsewhere' ? [s.task.messageId] : []));
    // Each outcome's records continue the trace of the decision they answer.
    const recorded = redelivered.length > 0 ? await recordedOutcomes(pool, redelivered) : new Map();
    for (const step of steps) {
      if (step.kind === 'claimed elsewhere') {
        metrics.eventsProcessed.inc({ group, topic: 'send-decided', outcome: 'redelivered' });
        const row = recorded.get(step.task.messageId);
        // Open (dispatching or unknown): the resolver settles it; nothing is sent from here.
        // Settled by the resolver: its outcome is on the topic already (appended before its row
        // committed), and a second copy here would be one more record of one outcome.
        if (row?.outcome && !row.appended) outputs.push(...(await outcomeRecords(codec, step.task, withSendFacts(row.outcome, step.task), step.trace)));
      } else if (step.outcome) {
        outputs.push(...(await outcomeRecords(codec, step.task, step.outcome, step.trace)));
      }
    }
    return outputs;
  };
}
