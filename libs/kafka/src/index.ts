export { KafkaClient, type KafkaClientOptions, type ListenOptions, type TransformOptions } from './client.ts';
export type { OutgoingRecord, ConsumedRecord, TopicSpec, TransformBatch, BatchContext, RunningConsumer } from './types.ts';
export { KafkaInspector, type PartitionRange, type ReadOptions } from './inspector.ts';
export { processBatch, BatchAbandoned, type StageFaults, type RecordFailure, type BatchControl } from './stage-runner.ts';
