/** The customer id that demos and docs use; any other path segment is its own tenant. */
export const SANDBOX_CUSTOMER_ID = 'demo-lender';

/** What the sandbox accepts as a customer id (the tenant path segment). */
export const CUSTOMER_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
