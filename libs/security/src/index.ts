export { generateApiKey, parseApiKey, secretMatches, hashSecret, type GeneratedApiKey } from './api-keys.ts';
export { SEAL_USES, SecretBox, SecretKeyMissing, UnknownKeyId, deriveKeyId, type SecretKeyConfig } from './secret-box.ts';
export { newId } from './ids.ts';
