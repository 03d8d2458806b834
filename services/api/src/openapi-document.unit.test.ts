import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '@gw/contract';
import { openapiDocument } from './openapi-document.ts';

describe('openapi.json', () => {
  it('is generated from the route schemas and the committed file is up to date (run `make openapi`)', async () => {
    const generated = await openapiDocument();
    const committed = JSON.parse(readFileSync(new URL('../../../openapi.json', import.meta.url), 'utf8'));
    expect(generated).toEqual(committed);
  });

  it('describes the v1 contract: OpenAPI 3.0.3, version 1.0.0, the send endpoint and its schemas', async () => {
    const doc = (await openapiDocument()) as any;
    expect(doc.openapi).toBe('3.0.3');
    expect(doc.info.version).toBe('1.0.0');
    const post = doc.paths['/api/send-message'].post;
    expect(Object.keys(post.responses).sort()).toEqual(['200', '400', '401', '403', '404', '413', '415', '422', '423', '429', '500', '502']);
    const request = doc.components.schemas.SendMessageRequest;
    expect(request.additionalProperties).toBe(false);
    expect(request.required).toEqual(['instance_id', 'phone', 'message', 'message_purpose']);
    expect(request.properties.message_purpose.enum).toEqual(['transactional', 'operational', 'support', 'internal_team', 'authentication']);
    expect(doc.components.schemas.SendMessageSuccess.required).toEqual(['success', 'status', 'message_id', 'log_id']);
    expect(doc.components.schemas.ApiError.properties.error.enum).toEqual(ERROR_CODES);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});
