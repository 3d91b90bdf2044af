/* tslint:disable */
/* eslint-disable */
export * from './BulkRequestsApi.js';
export * from './SubscriptionsApi.js';
