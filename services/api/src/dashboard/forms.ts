// How the dashboard's forms are declared: a JSON schema per form body with its CSRF token and
// bounded fields (the handler says in words what is wrong), and the email pattern the forms accept.
export const text = (maxLength: number) => ({ type: 'string', maxLength });

/** A form body: its CSRF token and these fields. */
export const form = (properties: Record<string, object>, required: string[] = []) => ({ body: { type: 'object', properties: { _csrf: text(200), ...properties }, required } });

/** An email address as far as a form can tell (the mail itself is the real check). */
export const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{2,63}$/;
