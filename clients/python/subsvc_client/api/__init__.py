# flake8: noqa

# import apis into api package
from subsvc_client.api.api_keys_api import APIKeysApi
from subsvc_client.api.analytics_api import AnalyticsApi
from subsvc_client.api.billing_connections_api import BillingConnectionsApi
from subsvc_client.api.bulk_requests_api import BulkRequestsApi
from subsvc_client.api.customer_portal_api import CustomerPortalApi
from subsvc_client.api.event_destinations_api import EventDestinationsApi
from subsvc_client.api.events_api import EventsApi
from subsvc_client.api.holds_api import HoldsApi
from subsvc_client.api.pause_policy_api import PausePolicyApi
from subsvc_client.api.plans_api import PlansApi
from subsvc_client.api.subscription_imports_api import SubscriptionImportsApi
from subsvc_client.api.subscriptions_api import SubscriptionsApi
from subsvc_client.api.test_helpers_api import TestHelpersApi
from subsvc_client.api.webhook_endpoints_api import WebhookEndpointsApi

