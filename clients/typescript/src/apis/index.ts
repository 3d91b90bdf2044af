/* tslint:disable */
/* eslint-disable */
export * from './APIKeysApi.js';
export * from './AnalyticsApi.js';
export * from './BillingConnectionsApi.js';
export * from './BulkRequestsApi.js';
export * from './CustomerPortalApi.js';
export * from './EventDestinationsApi.js';
export * from './EventsApi.js';
export * from './HoldsApi.js';
export * from './PausePolicyApi.js';
export * from './PlansApi.js';
export * from './SubscriptionImportsApi.js';
export * from './SubscriptionsApi.js';
export * from './TestHelpersApi.js';
export * from './WebhookEndpointsApi.js';
