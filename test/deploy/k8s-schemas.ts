// Checks a Kubernetes document against the real schema of its kind: the Kubernetes OpenAPI schemas
// (kubernetes-models), KEDA's CRDs (@kubernetes-models/keda) and Strimzi's CRDs (their
// openAPIV3Schema, with ajv). A document whose kind none of them knows is an error too, so
// nothing rendered goes unchecked.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import * as keda from '@kubernetes-models/keda';
import * as kubernetes from 'kubernetes-models';
import YAML from 'yaml';

/** What is wrong with one document: one line per problem, naming the field. Empty: valid. */
export type SchemaCheck = (doc: unknown) => string[];

interface ModelClass {
  apiVersion: string;
  kind: string;
  new (data: object): { validate(): void };
}

// kubernetes-models and its KEDA package export a namespace per API group, named in camel case
// (`rbac.authorization.k8s.io` → rbacAuthorizationK8sIo; the core group is `v1`).
const MODEL_GROUPS = Object.assign({}, kubernetes, keda) as unknown as Record<string, Record<string, Record<string, unknown>>>;

function groupExport(group: string): string {
  return group.split('.').map((part, i) => (i === 0 ? part : part.charAt(0).toUpperCase() + part.slice(1))).join('');
}

function modelFor(apiVersion: string, kind: string): ModelClass | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const models = group === '' ? (MODEL_GROUPS.v1 as unknown as Record<string, unknown>) : MODEL_GROUPS[groupExport(group!)]?.[version!];
  const model = (models as Record<string, unknown> | undefined)?.[kind] as ModelClass | undefined;
  // The namespaces also hold the kinds' parts (Container, PodSpec…): only a kind of this very apiVersion counts.
  return typeof model === 'function' && model.apiVersion === apiVersion && model.kind === kind ? model : undefined;
}

function describe(errors: readonly Partial<ErrorObject>[]): string[] {
  return errors.map((e) => {
    const at = e.instancePath || '/';
    if (e.keyword === 'additionalProperties') return `${at}/${String(e.params?.additionalProperty)}: unknown field`;
    if (e.keyword === 'required') return `${at}/${String(e.params?.missingProperty)}: required field missing`;
    return `${at}: ${e.message ?? e.keyword}`;
  });
}

// The extensions of Kubernetes' structural schemas. Their rules (CEL validations, list and map
// types) are the API server's to apply; here they are known keywords that check nothing.
const KUBERNETES_KEYWORDS = [
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-validations',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-embedded-resource',
  // An OpenAPI annotation, like `description`.
  'example',
];

/**
 * The API server prunes, and `kubectl apply` (strict field validation) refuses, any field a
 * structural schema does not declare, unless the object keeps unknown fields: the same here, so a
 * misspelt field of a custom resource is an error and not silently dropped.
 */
function refuseUndeclaredFields(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(refuseUndeclaredFields);
  if (schema === null || typeof schema !== 'object') return schema;
  const node = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, refuseUndeclaredFields(value)])) as Record<string, unknown>;
  if (node.type === 'object' && node.properties !== undefined && node.additionalProperties === undefined && node['x-kubernetes-preserve-unknown-fields'] !== true) {
    node.additionalProperties = false;
  }
  return node;
}

interface Crd {
  kind: string;
  spec: { group: string; names: { kind: string }; versions: Array<{ name: string; served: boolean; schema?: { openAPIV3Schema: object } }> };
}

/**
 * The served versions' schemas of every CRD in a folder, by `<group>/<version> <kind>`, each
 * compiled when first needed (Strimzi's larger CRDs take seconds to compile).
 */
function crdSchemas(folder: string): Map<string, () => ValidateFunction> {
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictRequired: false });
  for (const keyword of KUBERNETES_KEYWORDS) ajv.addKeyword({ keyword });
  const schemas = new Map<string, () => ValidateFunction>();
  for (const file of readdirSync(folder).filter((name) => name.endsWith('.yaml')).sort()) {
    for (const doc of YAML.parseAllDocuments(readFileSync(join(folder, file), 'utf8')).map((d) => d.toJS() as Crd)) {
      if (doc?.kind !== 'CustomResourceDefinition') continue;
      for (const version of doc.spec.versions) {
        const schema = version.schema?.openAPIV3Schema;
        if (!version.served || !schema) continue;
        let compiled: ValidateFunction | undefined;
        schemas.set(`${doc.spec.group}/${version.name} ${doc.spec.names.kind}`, () => (compiled ??= ajv.compile(refuseUndeclaredFields(schema) as object)));
      }
    }
  }
  return schemas;
}

/** A check for every kind Kubernetes, KEDA and the CRDs in `crdFolder` (Strimzi's) define. */
export function schemaCheck(crdFolder: string): SchemaCheck {
  const crds = crdSchemas(crdFolder);
  if (crds.size === 0) throw new Error(`no CustomResourceDefinition in ${crdFolder}`);
  return (doc) => {
    if (doc === null || typeof doc !== 'object') return ['/: not an object'];
    const { apiVersion, kind } = doc as { apiVersion?: unknown; kind?: unknown };
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') return ['/: apiVersion and kind must be strings'];
    const crd = crds.get(`${apiVersion} ${kind}`)?.();
    if (crd) return crd(doc) ? [] : describe(crd.errors ?? []);
    const model = modelFor(apiVersion, kind);
    if (!model) return [`/: no schema for ${kind} of ${apiVersion}`];
    try {
      new model(doc).validate();
      return [];
    } catch (error) {
      const errors = (error as { errors?: Partial<ErrorObject>[] }).errors;
      return errors ? describe(errors) : [`/: ${(error as Error).message}`];
    }
  };
}
