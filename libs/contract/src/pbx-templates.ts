/** Message templates per call event; an integration may replace any of them. */
export const DEFAULT_PBX_TEMPLATES: Record<string, string> = {
  missed_call: 'Sorry we missed your call at {call_time}. We will call you back as soon as we can.',
  after_hours: 'Thank you for calling. We are closed right now and will get back to you during opening hours.',
  voicemail: 'We received your voicemail and will get back to you soon.',
  queue_callback: 'You asked for a callback from {queue}. An agent will call you shortly.',
};

/** Call events that send their template when enabled. */
export const TEMPLATE_EVENTS = ['missed_call', 'after_hours', 'voicemail', 'queue_callback'] as const;

const PLACEHOLDERS = ['customer_phone', 'agent_extension', 'queue', 'call_time'] as const;

/** Fills {customer_phone}, {agent_extension}, {queue} and {call_time}; a missing value becomes empty. */
export function renderTemplate(template: string, values: Partial<Record<(typeof PLACEHOLDERS)[number], string>>): string {
  let text = template;
  for (const name of PLACEHOLDERS) text = text.split(`{${name}}`).join(values[name] ?? '');
  return text.replace(/\s{2,}/g, ' ').trim();
}

export type TemplateValues = Parameters<typeof renderTemplate>[1];

/**
 * The text a call event's template sends: the integration's own template for the event, or the
 * default one, with the event's values filled in. The PBX route sends it; the dashboard previews it.
 */
export function templateText(templates: Record<string, string>, eventType: string, values: TemplateValues): string {
  const template = templates[eventType] ?? DEFAULT_PBX_TEMPLATES[eventType]!;
  return renderTemplate(template, values);
}
