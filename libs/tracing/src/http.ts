// Attributes of HTTP spans (stable semantic conventions). Never the full URL: paths carry
// instance names, tokens (the manager webhook's) or whatever a customer put in their webhook URL.
import type { Attributes } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT, ATTR_URL_SCHEME, ATTR_URL_TEMPLATE } from './semconv.ts';

/** `POST /message/sendText/{instance}`: the method and the path's template, or the method alone. */
export function httpSpanName(method: string, template?: string): string {
  return template ? `${method} ${template}` : method;
}

/** A client span's attributes: method, the server's host and port, and the path's template when known. */
export function httpClientAttributes(method: string, url: string, template?: string): Attributes {
  const attributes: Attributes = { [ATTR_HTTP_REQUEST_METHOD]: method };
  if (template) attributes[ATTR_URL_TEMPLATE] = template;
  try {
    const parsed = new URL(url);
    const scheme = parsed.protocol.replace(/:$/, '');
    attributes[ATTR_URL_SCHEME] = scheme;
    attributes[ATTR_SERVER_ADDRESS] = parsed.hostname;
    attributes[ATTR_SERVER_PORT] = parsed.port !== '' ? Number(parsed.port) : scheme === 'https' ? 443 : 80;
  } catch {
    // An unparseable URL: the request fails on its own, the span keeps the method.
  }
  return attributes;
}
