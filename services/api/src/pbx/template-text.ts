// The text a call event's template sends: the integration's own template for the event, or the
// default one, with the event's values filled in. The PBX route sends it; the dashboard previews it.
import { DEFAULT_PBX_TEMPLATES, renderTemplate } from '@gw/contract';

export type TemplateValues = Parameters<typeof renderTemplate>[1];

export function templateText(templates: Record<string, string>, eventType: string, values: TemplateValues): string {
  const template = templates[eventType] ?? DEFAULT_PBX_TEMPLATES[eventType]!;
  return renderTemplate(template, values);
}
