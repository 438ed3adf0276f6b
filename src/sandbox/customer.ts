/** The customer id that demos and docs use; any other path segment is its own tenant. */
export const SANDBOX_CUSTOMER_ID = 'demo-lender';
