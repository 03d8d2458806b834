// deploy/k8s as `kubectl kustomize` renders it: every document valid against its kind's real
// schema, and the deployment matching what the code defines (topics, consumer groups, partition
// counts, ports, secrets) — the code is the source, these tests keep the manifests honest.
// (int tier: it runs kubectl and needs Strimzi's CRDs from Maven Central; no Kafka.)
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type GatewayConfig } from '@gw/config';
import { Topics, TOPIC_NAMES, type TopicName } from '@gw/events';
import { codeStages, deployedServices, servicesOpeningSecrets } from './code-facts.ts';
import { k8sTools, render, REPO_ROOT, type K8sDoc } from './k8s-render.ts';
import { schemaCheck } from './k8s-schemas.ts';
import { allContainers, containerEnv, named, ofKind, podLabels, podOf, portNumber, samplePodName, selects, workloads, type Container } from './k8s-workloads.ts';

// Where each service's ops server (/healthz, /readyz, /metrics) listens, as its main.ts reads it.
const OPS_ADDRESS: Record<string, (config: GatewayConfig) => { host: string; port: number }> = {
  api: (config) => config.api,
  policy: (config) => config.policy,
  delivery: (config) => config.delivery,
  'instance-events': (config) => config.instanceEvents,
  webhooks: (config) => config.webhooks,
};

const MIGRATE = ['services/gatewayctl/bin/gatewayctl.js', 'migrate'];

let docs: K8sDoc[];
let crdFolder: string;
beforeAll(() => {
  const tools = k8sTools();
  crdFolder = tools.strimziCrds;
  docs = render(tools.kubectl);
});

/** The service's own container in its workload (named after it). */
function serviceContainer(service: string): { workload: K8sDoc; container: Container } {
  const workload = workloads(docs).find((doc) => doc.metadata.name === service);
  if (!workload) throw new Error(`no Deployment or StatefulSet ${service}`);
  const container = podOf(workload).containers.find((c) => c.name === service);
  if (!container) throw new Error(`${workload.kind} ${service} has no container ${service}`);
  return { workload, container };
}

/** The gateway configuration a service's process loads in its pod (libs/config, the one reader of the environment). */
function serviceConfig(service: string): GatewayConfig {
  const { workload, container } = serviceContainer(service);
  return loadConfig(containerEnv(container, docs, samplePodName(workload)));
}

/** Any one service's configuration, for what every service shares (the tests check they do where it matters). */
const sharedConfig = () => serviceConfig(deployedServices()[0]!);

const topicsOf = (config: GatewayConfig) => new Topics(config.topicPrefix, config.topicPartitions, config.topicReplication);

/** Everything that runs the gateway's image: the services' workloads and the migration Job. */
function gatewayPods(): Array<{ owner: K8sDoc; pod: ReturnType<typeof podOf> }> {
  const owners = [...deployedServices().map((service) => serviceContainer(service).workload), ...ofKind(docs, 'Job')];
  return owners.map((owner) => ({ owner, pod: podOf(owner) }));
}

const commandLine = (container: Container) => [...(container.command ?? []), ...(container.args ?? [])].join(' ');

describe('deploy/k8s, rendered', () => {
  it('is valid: every document against its kind’s schema (Kubernetes, Strimzi, KEDA)', () => {
    const check = schemaCheck(crdFolder);
    const problems = docs.flatMap((doc) => check(doc).map((problem) => `${doc.kind} ${doc.metadata?.name}: ${problem}`));
    expect(problems).toEqual([]);
    const kinds = new Set(docs.map((doc) => doc.kind));
    for (const kind of ['Kafka', 'KafkaNodePool', 'KafkaTopic', 'Deployment', 'StatefulSet', 'PodDisruptionBudget', 'ScaledObject', 'Secret', 'Job']) expect(kinds, kind).toContain(kind);
  });

  it('has a KafkaTopic for exactly the topics the code uses, with its partitions and configuration', () => {
    const expected = topicsOf(sharedConfig()).specs().map((spec) => ({
      name: spec.name,
      partitions: spec.partitions,
      replicas: spec.replicationFactor,
      config: spec.config,
    }));
    // Every process derives the same topics from its environment.
    for (const service of deployedServices()) expect(topicsOf(serviceConfig(service)).specs(), service).toEqual(topicsOf(sharedConfig()).specs());
    const kafka = ofKind(docs, 'Kafka');
    expect(kafka).toHaveLength(1);
    const rendered = ofKind(docs, 'KafkaTopic').map((topic) => {
      expect(topic.metadata.labels?.['strimzi.io/cluster'], topic.metadata.name).toBe(kafka[0]!.metadata.name);
      return {
        name: topic.spec.topicName ?? topic.metadata.name,
        partitions: topic.spec.partitions,
        replicas: topic.spec.replicas,
        config: Object.fromEntries(Object.entries(topic.spec.config ?? {}).map(([key, value]) => [key, String(value)])),
      };
    });
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect(rendered.sort(byName)).toEqual(expected.sort(byName));
  });

  it('runs Kafka as 3 combined KRaft nodes with the replication the gateway’s topics ask for', () => {
    const [kafka] = ofKind(docs, 'Kafka');
    const { topicReplication } = sharedConfig();
    expect(kafka!.metadata.annotations).toMatchObject({ 'strimzi.io/kraft': 'enabled', 'strimzi.io/node-pools': 'enabled' });
    // Kafka 3.9.x: the version the gateway is tested against (deploy/local).
    expect(kafka!.spec.kafka.version).toMatch(/^3\.9\.\d+$/);
    const pools = ofKind(docs, 'KafkaNodePool').filter((pool) => pool.metadata.labels?.['strimzi.io/cluster'] === kafka!.metadata.name);
    expect(pools.map((pool) => [...pool.spec.roles].sort())).toEqual([['broker', 'controller']]);
    expect(pools[0]!.spec.replicas).toBe(3);
    expect(topicReplication.factor).toBeLessThanOrEqual(pools[0]!.spec.replicas);
    // One node may be down and writes (acks=all) still succeed.
    expect(topicReplication.minInsync).toBeLessThan(topicReplication.factor);
    const config = kafka!.spec.kafka.config;
    expect(config).toMatchObject({
      'default.replication.factor': topicReplication.factor,
      'min.insync.replicas': topicReplication.minInsync,
      'offsets.topic.replication.factor': topicReplication.factor,
      'transaction.state.log.replication.factor': topicReplication.factor,
      'transaction.state.log.min.isr': topicReplication.minInsync,
    });
    expect(kafka!.spec.entityOperator?.topicOperator).toBeDefined();
  });

  it('points the gateway and KEDA at the cluster’s bootstrap service', () => {
    const [kafka] = ofKind(docs, 'Kafka');
    const listener = kafka!.spec.kafka.listeners.find((l: { type: string; tls: boolean }) => l.type === 'internal' && !l.tls);
    const bootstrap = `${kafka!.metadata.name}-kafka-bootstrap`;
    for (const service of deployedServices()) expect(serviceConfig(service).kafkaBrokers, service).toEqual([`${bootstrap}:${listener.port}`]);
    // KEDA's operator runs in another namespace: the full name.
    const full = `${bootstrap}.${kafka!.metadata.namespace}.svc:${listener.port}`;
    for (const scaled of ofKind(docs, 'ScaledObject')) {
      for (const trigger of scaled.spec.triggers) expect(trigger.metadata.bootstrapServers, scaled.metadata.name).toBe(full);
    }
  });

  it('scales every consumer stage on its group’s lag, up to its topic’s partition count', () => {
    const stages = codeStages();
    const consumers = [...new Set(stages.map((stage) => stage.service))];
    expect(consumers.length).toBeGreaterThan(0);
    const scaled = ofKind(docs, 'ScaledObject');
    // One ScaledObject per consumer service, and none for anything else.
    expect(scaled.map((s) => s.spec.scaleTargetRef.name).sort()).toEqual([...consumers].sort());
    for (const service of consumers) {
      const topics = topicsOf(serviceConfig(service));
      const partitions = new Map(topics.specs().map((spec) => [spec.name, spec.partitions]));
      const object = scaled.find((s) => s.spec.scaleTargetRef.name === service)!;
      const { workload } = serviceContainer(service);
      expect(object.spec.scaleTargetRef, service).toMatchObject({ apiVersion: workload.apiVersion, kind: workload.kind });
      const wanted = stages.filter((stage) => stage.service === service).map((stage) => ({ consumerGroup: topics.group(stage.name), topic: topics.name(stage.topic as TopicName) }));
      const triggers = object.spec.triggers.map((t: { type: string; metadata: Record<string, string> }) => ({ type: t.type, consumerGroup: t.metadata.consumerGroup, topic: t.metadata.topic }));
      expect(triggers, service).toEqual(wanted.map((w) => ({ type: 'kafka', ...w })));
      // A group member beyond the partition count would get no partition.
      const cap = Math.min(...wanted.map((w) => partitions.get(w.topic)!));
      expect(object.spec.maxReplicaCount, service).toBe(cap);
      expect(object.spec.minReplicaCount, service).toBeGreaterThanOrEqual(1);
      expect(object.spec.minReplicaCount, service).toBeLessThanOrEqual(cap);
      for (const t of object.spec.triggers) expect(t.metadata.allowIdleConsumers, service).not.toBe('true');
    }
    // Every stage's topic exists in the code's topic list.
    for (const stage of stages) expect(Object.keys(TOPIC_NAMES), `${stage.service} ${stage.name}`).toContain(stage.topic);
  });

  it('gives every consumer pod a stable, distinct CONSUMER_INSTANCE_ID: StatefulSets and the pod’s name', () => {
    for (const service of new Set(codeStages().map((stage) => stage.service))) {
      const { workload, container } = serviceContainer(service);
      expect(workload.kind, service).toBe('StatefulSet');
      const id = container.env?.find((e) => e.name === 'CONSUMER_INSTANCE_ID');
      expect(id?.valueFrom?.fieldRef?.fieldPath, service).toBe('metadata.name');
      expect(serviceConfig(service).consumerInstanceId, service).toBe(samplePodName(workload));
    }
  });

  it('runs every service of the code, with /readyz and /healthz probes on the port it listens on', () => {
    expect(Object.keys(OPS_ADDRESS).sort()).toEqual(deployedServices());
    for (const service of deployedServices()) {
      const { container } = serviceContainer(service);
      const entry = `services/${service}/src/main.ts`;
      expect(container.command, service).toContain(entry);
      expect(existsSync(join(REPO_ROOT, entry)), entry).toBe(true);
      const ops = OPS_ADDRESS[service]!(serviceConfig(service));
      // Reachable from the kubelet, not only from inside the pod.
      expect(ops.host, service).toBe('0.0.0.0');
      expect(container.ports?.map((p) => p.containerPort), service).toContain(ops.port);
      expect(container.readinessProbe?.httpGet?.path, service).toBe('/readyz');
      expect(portNumber(container, container.readinessProbe.httpGet.port), service).toBe(ops.port);
      expect(container.livenessProbe?.httpGet?.path, service).toBe('/healthz');
      expect(portNumber(container, container.livenessProbe.httpGet.port), service).toBe(ops.port);
    }
  });

  it('runs the gateway’s image everywhere from one name, which an overlay can replace', () => {
    const images = new Set(gatewayPods().flatMap(({ pod }) => allContainers(pod).map((c) => c.image)));
    expect([...images]).toEqual(['chat-gateway:latest']);
  });

  it('has readiness and liveness probes on the registry, and requests and limits on every container', () => {
    const registry = named(docs, 'Deployment', 'registry');
    for (const c of podOf(registry).containers) {
      expect(c.readinessProbe?.httpGet?.path, c.name).toBeDefined();
      expect(c.livenessProbe?.httpGet?.path, c.name).toBeDefined();
    }
    for (const owner of [...workloads(docs), ...ofKind(docs, 'Job')]) {
      for (const c of allContainers(podOf(owner))) {
        const where = `${owner.kind} ${owner.metadata.name} ${c.name}`;
        expect(Object.keys(c.resources?.requests ?? {}).sort(), where).toEqual(['cpu', 'memory']);
        expect(Object.keys(c.resources?.limits ?? {}).sort(), where).toEqual(['cpu', 'memory']);
      }
    }
  });

  it('has exactly one PodDisruptionBudget for each workload', () => {
    const budgets = ofKind(docs, 'PodDisruptionBudget');
    for (const workload of workloads(docs)) {
      const covering = budgets.filter((b) => selects(b.spec.selector, podLabels(workload)));
      expect(covering.map((b) => b.metadata.name), `${workload.kind} ${workload.metadata.name}`).toHaveLength(1);
    }
    for (const budget of budgets) {
      expect(workloads(docs).filter((w) => selects(budget.spec.selector, podLabels(w))), budget.metadata.name).toHaveLength(1);
    }
  });

  it('migrates the database before any service starts: a Job, and the same command in every pod first', () => {
    const jobs = ofKind(docs, 'Job');
    expect(jobs.map((job) => commandLine(podOf(job).containers[0]!))).toEqual([expect.stringContaining(MIGRATE.join(' '))]);
    expect(existsSync(join(REPO_ROOT, MIGRATE[0]!))).toBe(true);
    // gatewayctl reads the local stack's settings file unless GATEWAY_ENV is set (libs/config withLocalSettings).
    const [job] = jobs;
    expect(containerEnv(podOf(job!).containers[0]!, docs, 'gateway-migrate-x7k2p').GATEWAY_ENV).toBe('production');
    for (const service of deployedServices()) {
      const { workload, container } = serviceContainer(service);
      const init = podOf(workload).initContainers ?? [];
      expect(init.map(commandLine), service).toEqual([expect.stringContaining(MIGRATE.join(' '))]);
      expect(init[0]!.image, service).toBe(container.image);
      expect(containerEnv(init[0]!, docs, samplePodName(workload)).GATEWAY_ENV, service).toBe('production');
    }
  });

  it('takes every secret from a Secret, and commits none', () => {
    const secrets = ofKind(docs, 'Secret');
    const secretKeys = new Set(secrets.flatMap((s) => Object.keys(s.data ?? {})));
    expect(secretKeys).toContain('GATEWAY_SECRET_KEY');
    expect(secretKeys).toContain('DATABASE_URL');
    // Placeholders only: the real values come from an overlay (README.md).
    for (const secret of secrets) for (const [key, value] of Object.entries(secret.data ?? {})) expect(value, `${secret.metadata.name} ${key}`).toBe('');
    for (const map of ofKind(docs, 'ConfigMap')) for (const key of Object.keys(map.data ?? {})) expect(secretKeys, `ConfigMap ${map.metadata.name}`).not.toContain(key);
    for (const owner of [...workloads(docs), ...ofKind(docs, 'Job')]) {
      for (const c of allContainers(podOf(owner))) {
        for (const e of c.env ?? []) {
          const where = `${owner.metadata.name} ${c.name} ${e.name}`;
          if (secretKeys.has(e.name)) expect(e.value, where).toBeUndefined();
          const ref = e.valueFrom?.secretKeyRef;
          if (ref) expect(Object.keys(named(docs, 'Secret', ref.name).data ?? {}), where).toContain(ref.key);
        }
        for (const from of c.envFrom ?? []) if (from.secretRef) named(docs, 'Secret', from.secretRef.name);
      }
    }
    // Every process reaches Postgres; those whose code seals or opens secrets have the key.
    for (const service of deployedServices()) expect(serviceConfig(service).databaseUrl, service).toMatch(/^<secret gateway-secrets-[a-z0-9]+\/DATABASE_URL>$/);
    const keyed = servicesOpeningSecrets();
    expect(keyed.length).toBeGreaterThan(0);
    for (const service of keyed) {
      const config = serviceConfig(service);
      expect(config.gatewayEnv, service).toBe('production');
      expect(config.secretKey.fromEnv ?? 'not set', service).toMatch(/^<secret gateway-secrets-[a-z0-9]+\/GATEWAY_SECRET_KEY>$/);
    }
  });

  it('runs the schema registry on Postgres where the gateway looks for it', () => {
    const registry = named(docs, 'Deployment', 'registry');
    const [container] = podOf(registry).containers;
    expect(container!.image).toMatch(/^quay\.io\/apicurio\/apicurio-registry:3\./);
    const env = containerEnv(container!, docs, samplePodName(registry));
    expect(env).toMatchObject({ APICURIO_STORAGE_KIND: 'sql', APICURIO_STORAGE_SQL_KIND: 'postgresql' });
    for (const key of ['APICURIO_DATASOURCE_URL', 'APICURIO_DATASOURCE_USERNAME', 'APICURIO_DATASOURCE_PASSWORD']) expect(env[key] ?? 'not set', key).toMatch(/^<secret registry-secrets-/);
    const urls = new Set(deployedServices().map((service) => serviceConfig(service).schemaRegistryUrl));
    expect(urls.size).toBe(1);
    const url = new URL([...urls][0]!);
    expect(url.pathname).toBe('/apis/ccompat/v7');
    const service = named(docs, 'Service', url.hostname);
    expect(selects({ matchLabels: service.spec.selector }, podLabels(registry))).toBe(true);
    const port = service.spec.ports.find((p: { port: number }) => String(p.port) === url.port);
    expect(port, 'the registry Service port of SCHEMA_REGISTRY_URL').toBeDefined();
    expect(portNumber(container!, port.targetPort)).toBe(8080);
  });
});
