// The overlay README.md tells an operator to write (their image, their secrets) does what it says:
// every gateway container runs the image it names, and every reference follows the Secret it
// makes from a file kept out of git. (int tier: it runs kubectl.)
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { K8S_DIR, k8sTools, render, type K8sDoc } from './k8s-render.ts';
import { allContainers, ofKind, podOf, workloads } from './k8s-workloads.ts';

let overlay: string;
let docs: K8sDoc[];

beforeAll(() => {
  overlay = mkdtempSync(join(tmpdir(), 'gw-overlay-'));
  writeFileSync(
    join(overlay, 'kustomization.yaml'),
    [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'resources:',
      // kustomize takes a base by relative path only.
      `  - ${relative(overlay, K8S_DIR)}`,
      'images:',
      '  - name: chat-gateway',
      '    newName: registry.example.com/chat-gateway',
      '    newTag: "1.4.2"',
      'secretGenerator:',
      '  - name: gateway-secrets',
      '    behavior: replace',
      '    envs: [gateway-secrets.env]',
      '',
    ].join('\n'),
  );
  writeFileSync(join(overlay, 'gateway-secrets.env'), 'GATEWAY_SECRET_KEY=not-a-real-key-0123456789\nDATABASE_URL=postgres://gateway@db.example.com:5432/chat_gateway\nMANAGER_GLOBAL_API_KEY=manager-key\n');
  docs = render(k8sTools().kubectl, overlay);
});

afterAll(() => rmSync(overlay, { recursive: true, force: true }));

describe('an overlay of deploy/k8s', () => {
  it('replaces the gateway image in every container that runs it, and nothing else', () => {
    const images = [...workloads(docs), ...ofKind(docs, 'Job')].flatMap((owner) => allContainers(podOf(owner)).map((c) => `${owner.metadata.name}/${c.name}: ${c.image}`));
    const gateway = images.filter((line) => !line.startsWith('registry/'));
    expect(gateway.length).toBeGreaterThan(0);
    for (const line of gateway) expect(line).toMatch(/: registry\.example\.com\/chat-gateway:1\.4\.2$/);
    expect(images.filter((line) => line.startsWith('registry/'))).toEqual([expect.stringMatching(/: quay\.io\/apicurio\/apicurio-registry:/)]);
  });

  it('replaces the secrets, and every reference follows to the new Secret', () => {
    const secrets = ofKind(docs, 'Secret').filter((s) => s.metadata.name.startsWith('gateway-secrets'));
    expect(secrets).toHaveLength(1);
    const [secret] = secrets;
    const decoded = Object.fromEntries(Object.entries(secret!.data ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]));
    expect(decoded).toEqual({ GATEWAY_SECRET_KEY: 'not-a-real-key-0123456789', DATABASE_URL: 'postgres://gateway@db.example.com:5432/chat_gateway', MANAGER_GLOBAL_API_KEY: 'manager-key' });
    const refs = [...workloads(docs), ...ofKind(docs, 'Job')]
      .flatMap((owner) => allContainers(podOf(owner)))
      .flatMap((c) => (c.env ?? []).map((e) => e.valueFrom?.secretKeyRef?.name).filter((name): name is string => name?.startsWith('gateway-secrets') ?? false));
    expect(refs.length).toBeGreaterThan(0);
    expect(new Set(refs)).toEqual(new Set([secret!.metadata.name]));
  });
});
