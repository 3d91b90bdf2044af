/* tslint:disable */
/* eslint-disable */
export * from './SubscriptionsApi.js';
