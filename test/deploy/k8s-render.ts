// Renders deploy/k8s as `kubectl apply -k` would send it, with the kubectl and Strimzi CRDs that
// deploy/k8s/tools.sh (make k8s-tools) provides.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const K8S_DIR = `${REPO_ROOT}deploy/k8s`;

export interface K8sTools {
  kubectl: string;
  /** The folder of Strimzi's CRDs (their v1beta2 versions). */
  strimziCrds: string;
}

/** Runs deploy/k8s/tools.sh (cached after its first run) and reads what it printed. */
export function k8sTools(): K8sTools {
  const out = execFileSync('bash', [`${K8S_DIR}/tools.sh`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const value = (key: string) => {
    const found = new RegExp(`^${key}=(.+)$`, 'm').exec(out)?.[1];
    if (!found) throw new Error(`deploy/k8s/tools.sh printed no ${key}=`);
    return found;
  };
  return { kubectl: value('KUBECTL'), strimziCrds: value('STRIMZI_CRDS') };
}

/** A Kubernetes document as rendered (the fields the tests read; the schemas check the rest). */
export interface K8sDoc {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}

/** `kubectl kustomize <dir>`: every document, in order. */
export function render(kubectl: string, dir: string = K8S_DIR): K8sDoc[] {
  const out = execFileSync(kubectl, ['kustomize', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return YAML.parseAllDocuments(out).map((doc) => doc.toJS() as K8sDoc).filter((doc) => doc !== null);
}
