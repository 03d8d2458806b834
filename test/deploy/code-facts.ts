// What the code says the deployment must match, read from the code itself (never a copy of it):
// the services, the consumer stages each runs, and which of them open sealed secrets.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from './k8s-render.ts';

const SERVICES_DIR = join(REPO_ROOT, 'services');

/** Not deployed as a service: the simulator is a test double; gatewayctl is the operator CLI (the migration Job runs it). */
const NOT_SERVICES = new Set(['instance-simulator', 'gatewayctl']);

/** The services a deployment runs: every services/<name> with a src/main.ts, but those above. */
export function deployedServices(): string[] {
  return readdirSync(SERVICES_DIR)
    .filter((name) => !NOT_SERVICES.has(name) && existsSync(join(SERVICES_DIR, name, 'src/main.ts')))
    .sort();
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

export interface CodeStage {
  service: string;
  /** The consumer group's name without the topic prefix (libs/runtime runStage). */
  name: string;
  /** The logical topic (a key of @gw/events TOPIC_NAMES). */
  topic: string;
}

function literalProperty(call: ts.ObjectLiteralExpression, property: string): string | undefined {
  for (const p of call.properties) {
    if (ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === property && ts.isStringLiteralLike(p.initializer)) return p.initializer.text;
  }
  return undefined;
}

/**
 * Every `runtime.runStage({ name, topic, … })` call in the deployed services' sources, parsed with
 * the TypeScript compiler. A call whose name or topic is not a literal cannot be checked: an error.
 */
let parsed: CodeStage[] | undefined;
export function codeStages(): CodeStage[] {
  return (parsed ??= parseStages());
}

function parseStages(): CodeStage[] {
  const stages: CodeStage[] = [];
  for (const service of deployedServices()) {
    for (const file of sourceFiles(join(SERVICES_DIR, service, 'src'))) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node): void => {
        if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'runStage') {
          const [definition] = node.arguments;
          const name = definition && ts.isObjectLiteralExpression(definition) ? literalProperty(definition, 'name') : undefined;
          const topic = definition && ts.isObjectLiteralExpression(definition) ? literalProperty(definition, 'topic') : undefined;
          if (name === undefined || topic === undefined) {
            const { line } = source.getLineAndCharacterOfPosition(node.getStart());
            throw new Error(`${file}:${line + 1}: runStage without a literal name and topic; test/deploy cannot match it to a ScaledObject`);
          }
          stages.push({ service, name, topic });
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
  }
  return stages;
}

/** The services whose code opens or seals secrets (SecretBox.fromConfig): they need GATEWAY_SECRET_KEY. */
export function servicesOpeningSecrets(): string[] {
  return deployedServices().filter((service) =>
    sourceFiles(join(SERVICES_DIR, service, 'src')).some((file) => readFileSync(file, 'utf8').includes('SecretBox.fromConfig(')),
  );
}
