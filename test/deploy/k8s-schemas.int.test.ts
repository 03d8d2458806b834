// The schema check refuses what the API server would refuse, naming the field, and knows no kind
// it has no schema for. (int tier: it needs Strimzi's CRDs, fetched from Maven Central.)
import { beforeAll, describe, expect, it } from 'vitest';
import { k8sTools } from './k8s-render.ts';
import { schemaCheck, type SchemaCheck } from './k8s-schemas.ts';

let check: SchemaCheck;
beforeAll(() => {
  check = schemaCheck(k8sTools().strimziCrds);
});

const deployment = () => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'api' },
  spec: {
    replicas: 2 as unknown,
    selector: { matchLabels: { app: 'api' } },
    template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'api', image: 'chat-gateway:latest' }] } },
  },
});

const kafkaTopic = () => ({
  apiVersion: 'kafka.strimzi.io/v1beta2',
  kind: 'KafkaTopic',
  metadata: { name: 'gw.customer-events.v1', labels: { 'strimzi.io/cluster': 'gw' } },
  spec: { partitions: 6 as unknown, replicas: 3, config: { 'retention.ms': '-1' } } as Record<string, unknown>,
});

const nodePool = () => ({
  apiVersion: 'kafka.strimzi.io/v1beta2',
  kind: 'KafkaNodePool',
  metadata: { name: 'combined', labels: { 'strimzi.io/cluster': 'gw' } },
  spec: { replicas: 3, roles: ['controller', 'broker'], storage: { type: 'ephemeral' } } as Record<string, unknown>,
});

const scaledObject = () => ({
  apiVersion: 'keda.sh/v1alpha1',
  kind: 'ScaledObject',
  metadata: { name: 'policy' },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'policy' },
    maxReplicaCount: 6,
    triggers: [{ type: 'kafka', metadata: { bootstrapServers: 'gw-kafka-bootstrap:9092', consumerGroup: 'gw.policy', topic: 'gw.customer-events.v1', lagThreshold: '100' } }],
  } as Record<string, unknown>,
});

describe('the schema check', () => {
  it('accepts valid documents of Kubernetes, Strimzi and KEDA', () => {
    for (const doc of [deployment(), kafkaTopic(), nodePool(), scaledObject()]) expect(check(doc), doc.kind).toEqual([]);
  });

  it('refuses a Deployment whose replicas is not a number', () => {
    const doc = deployment();
    doc.spec.replicas = 'three';
    expect(check(doc)).toEqual(['/spec/replicas: must be integer']);
  });

  it('refuses a KafkaTopic whose partitions is not a number (Strimzi CRD)', () => {
    const doc = kafkaTopic();
    doc.spec.partitions = 'six';
    expect(check(doc)).toEqual(['/spec/partitions: must be integer']);
  });

  it('refuses a field a Strimzi CRD does not declare, as the API server does', () => {
    const doc = nodePool();
    doc.spec.resource = { requests: { memory: '2Gi' } };
    expect(check(doc)).toEqual(['/spec/resource: unknown field']);
  });

  it('refuses a ScaledObject without scaleTargetRef (KEDA CRD)', () => {
    const doc = scaledObject();
    delete doc.spec.scaleTargetRef;
    expect(check(doc)).toEqual(['/spec/scaleTargetRef: required field missing']);
  });

  it('refuses a kind, or a version of a kind, it has no schema for', () => {
    expect(check({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })).toEqual(['/: no schema for Widget of example.com/v1']);
    expect(check({ ...deployment(), apiVersion: 'apps/v2' })).toEqual(['/: no schema for Deployment of apps/v2']);
    expect(check({ ...kafkaTopic(), apiVersion: 'kafka.strimzi.io/v2' })).toEqual(['/: no schema for KafkaTopic of kafka.strimzi.io/v2']);
  });
});
