// Reading rendered manifests the way Kubernetes does: pods of workloads, the environment a
// container gets, which pods a selector picks, what a named port is.
import type { K8sDoc } from './k8s-render.ts';

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: Array<{ name?: string; containerPort: number }>;
  env?: Array<{ name: string; value?: string; valueFrom?: any }>;
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  readinessProbe?: any;
  livenessProbe?: any;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
}

export function ofKind(docs: K8sDoc[], kind: string): K8sDoc[] {
  return docs.filter((doc) => doc.kind === kind);
}

export function named(docs: K8sDoc[], kind: string, name: string): K8sDoc {
  const found = docs.find((doc) => doc.kind === kind && doc.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} rendered`);
  return found;
}

/** Deployments and StatefulSets: what runs pods for good (Jobs run to completion). */
export function workloads(docs: K8sDoc[]): K8sDoc[] {
  return docs.filter((doc) => doc.kind === 'Deployment' || doc.kind === 'StatefulSet');
}

export function podOf(doc: K8sDoc): PodSpec {
  return doc.spec.template.spec as PodSpec;
}

export function podLabels(doc: K8sDoc): Record<string, string> {
  return (doc.spec.template.metadata?.labels ?? {}) as Record<string, string>;
}

export function allContainers(pod: PodSpec): Container[] {
  return [...(pod.initContainers ?? []), ...pod.containers];
}

/** A label selector's matchLabels picks these labels (matchExpressions are not used here: refused). */
export function selects(selector: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] } | undefined, labels: Record<string, string>): boolean {
  if (!selector?.matchLabels || selector.matchExpressions) return false;
  return Object.entries(selector.matchLabels).every(([key, value]) => labels[key] === value);
}

/** What a value read from a Secret looks like in a resolved environment (the rendered Secrets hold no values). */
export const fromSecret = (secret: string, key: string) => `<secret ${secret}/${key}>`;

/**
 * The environment a container starts with, as the kubelet builds it: envFrom in order, then env
 * over it. Values from Secrets are `fromSecret(name, key)`; `metadata.name` is `podName`.
 */
export function containerEnv(container: Container, docs: K8sDoc[], podName: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) Object.assign(env, named(docs, 'ConfigMap', source.configMapRef.name).data ?? {});
    if (source.secretRef) {
      const secret = named(docs, 'Secret', source.secretRef.name);
      for (const key of Object.keys(secret.data ?? {})) env[key] = fromSecret(source.secretRef.name, key);
    }
  }
  for (const { name, value, valueFrom } of container.env ?? []) {
    if (value !== undefined) env[name] = value;
    else if (valueFrom?.secretKeyRef) env[name] = fromSecret(valueFrom.secretKeyRef.name, valueFrom.secretKeyRef.key);
    else if (valueFrom?.configMapKeyRef) env[name] = named(docs, 'ConfigMap', valueFrom.configMapKeyRef.name).data?.[valueFrom.configMapKeyRef.key] ?? '';
    else if (valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[name] = podName;
    else throw new Error(`${container.name}: env ${name} comes from a source these tests do not resolve`);
  }
  return env;
}

/** The container port a probe or Service names (by number or by the port's name). */
export function portNumber(container: Container, port: number | string): number | undefined {
  if (typeof port === 'number') return port;
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

/** The first pod's name: `<name>-0` for a StatefulSet (its ordinal), a sample for a Deployment. */
export function samplePodName(doc: K8sDoc): string {
  return doc.kind === 'StatefulSet' ? `${doc.metadata.name}-0` : `${doc.metadata.name}-5d8f7c9b4-x2x7q`;
}
